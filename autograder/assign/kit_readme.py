"""The student kit's README.md: what the folder holds, points and time, the steps, and the computers it runs on.

Both languages in one file, the notebooks' language first. The points table is read
from the built notebooks' nbgrader metadata (:mod:`autograder.assign.points`), so the
README, the notebooks' first cells and the gradebook cannot disagree.
"""

from __future__ import annotations

from autograder.assign import notebooks, points, sources

README_TEXT = {
    "en": """## English

This folder is the whole assignment; keep its files together:

* `{assignment}`: the assignment (questions, numerical exercises, ten kernels);
* `{lab}`: the capstone lab (its training loops use your kernels);
* `m5_student/`: the support library both notebooks import;
* `requirements.txt`: the packages, pinned.

### Points and expected time

{points}

### Steps

1. Once (Python 3.11+), in a virtual environment outside this folder (the whole folder is submitted).
   Create and activate it:

   ```
   python -m venv ~/m5-venv
   source ~/m5-venv/bin/activate            # Linux, macOS
   ~\\m5-venv\\Scripts\\Activate.ps1          # Windows PowerShell
   %USERPROFILE%\\m5-venv\\Scripts\\activate   # Windows cmd (create it there with %USERPROFILE%\\m5-venv)
   ```

   Then install the packages; everything comes from the package registry (PyPI):

   ```
   pip install -r requirements.txt
   ```

   Optional, without a GPU: the CPU-only torch is a much smaller download, from the PyTorch download host
   (not the package registry; skip this step where only the registry is reachable). Run it before the line above:

   ```
   pip install torch=={torch} --index-url https://download.pytorch.org/whl/cpu
   ```

2. Start Jupyter in this folder (`jupyter lab`), open `{assignment}` and run the first two cells.
3. Write your answers in the answer cells; run the self-check cell under each kernel.
4. Before submitting: *Kernel → Restart & Run All*, **save the notebook** (Ctrl+S / Cmd+S: the check reads
   the file on disk, not the open notebook), then, in a terminal in this folder:

   ```
   python -m m5_student check {assignment}
   ```

   It runs the public checks of your ten kernels and checks that every numerical answer is assigned in the
   expected format (a number or a list of numbers). Passing it does not guarantee full marks: the hidden
   tests check many more inputs, and the format check does not say whether a value is right.
5. The lab (`{lab}`) trains with your kernels and asks for four torch ports (its section 5a) and six written
   answers. It runs a short smoke profile; for the full one, start Jupyter with the variable set:

   ```
   RL_LLM_M5_PROFILE=full jupyter lab                     # Linux, macOS
   $env:RL_LLM_M5_PROFILE = "full"; jupyter lab           # Windows PowerShell
   set RL_LLM_M5_PROFILE=full                             # Windows cmd, then: jupyter lab
   ```

6. Submit this folder as your course says (nbgrader: the *Submit* button of the Assignments tab).

### Computers

The kit runs on Windows, macOS and Linux with Python 3.11 or newer, also from a folder whose path has
spaces or non-Latin letters. The self-check stops a kernel that runs too long (10 s per check) on every
platform: with the system's alarm on Linux and macOS, with a watchdog thread on Windows, where a kernel
stuck inside one long numpy call or a `time.sleep` is stopped only when that call returns. A report that
the console cannot show (Russian under a non-UTF-8 locale) is written as UTF-8, never as an error. The kit
runs no shell command and reads and writes every file as UTF-8.

How this is tested: on Linux, the course's tests run the kit without the course's own package, from a
folder named with spaces and Cyrillic letters, under `LC_ALL=C PYTHONUTF8=0`, with the alarm removed from
Python's `signal` module as on Windows, on a correct notebook, a wrong one and a hanging kernel. Native
Windows and macOS are not part of the course's automated tests.
""",
    "ru": """## Русский

Эта папка — всё задание; держите её файлы вместе:

* `{assignment}` — задание (вопросы, вычислительные упражнения, десять ядер);
* `{lab}` — итоговая лабораторная (её циклы обучения используют ваши ядра);
* `m5_student/` — библиотека поддержки, которую импортируют оба ноутбука;
* `requirements.txt` — пакеты с зафиксированными версиями.

### Баллы и ожидаемое время

{points}

### Шаги

1. Один раз (Python 3.11+), в виртуальном окружении вне этой папки (папка сдаётся целиком).
   Создайте и активируйте его:

   ```
   python -m venv ~/m5-venv
   source ~/m5-venv/bin/activate            # Linux, macOS
   ~\\m5-venv\\Scripts\\Activate.ps1          # Windows PowerShell
   %USERPROFILE%\\m5-venv\\Scripts\\activate   # Windows cmd (создайте его там: %USERPROFILE%\\m5-venv)
   ```

   Затем установите пакеты; всё берётся из реестра пакетов (PyPI):

   ```
   pip install -r requirements.txt
   ```

   По желанию, без GPU: torch только для CPU загружается намного быстрее, но с сервера загрузок PyTorch
   (это не реестр пакетов; пропустите шаг, если доступен только реестр). Выполните до строки выше:

   ```
   pip install torch=={torch} --index-url https://download.pytorch.org/whl/cpu
   ```

2. Запустите Jupyter в этой папке (`jupyter lab`), откройте `{assignment}` и выполните первые две ячейки.
3. Пишите ответы в ячейках ответа; под каждым ядром запускайте ячейку самопроверки.
4. Перед сдачей: *Kernel → Restart & Run All*, **сохраните ноутбук** (Ctrl+S / Cmd+S: проверка читает файл
   на диске, а не открытый ноутбук), затем в терминале в этой папке:

   ```
   python -m m5_student check {assignment}
   ```

   Команда запускает открытые проверки ваших десяти ядер и проверяет, что каждый числовой ответ присвоен
   в нужном формате (число или список чисел). Это не гарантирует полный балл: скрытые тесты проверяют
   намного больше входов, а проверка формата не говорит, верно ли значение.
5. Лабораторная (`{lab}`) обучается на ваших ядрах и просит написать четыре версии на torch (её раздел 5a) и шесть
   письменных ответов. Она идёт в коротком профиле smoke; для полного запустите Jupyter с заданной переменной:

   ```
   RL_LLM_M5_PROFILE=full jupyter lab                     # Linux, macOS
   $env:RL_LLM_M5_PROFILE = "full"; jupyter lab           # Windows PowerShell
   set RL_LLM_M5_PROFILE=full                             # Windows cmd, затем: jupyter lab
   ```

6. Сдайте эту папку так, как принято в вашем курсе (nbgrader: кнопка *Submit* на вкладке Assignments).

### Компьютеры

Набор работает в Windows, macOS и Linux с Python 3.11 или новее, в том числе из папки, в пути которой есть
пробелы или русские буквы. Самопроверка останавливает ядро, которое работает слишком долго (10 с на
проверку), на любой платформе: в Linux и macOS — системным таймером (alarm), в Windows — сторожевым
потоком; там ядро, застрявшее внутри одного долгого вызова numpy или `time.sleep`, останавливается только
когда этот вызов завершится. Отчёт, который консоль не может показать (русский текст при локали не в
UTF-8), выводится в UTF-8, а не падает с ошибкой. Набор не запускает команд оболочки и читает и пишет все
файлы в UTF-8.

Как это проверяется: в Linux тесты курса запускают набор без собственного пакета курса, из папки, в имени
которой есть пробелы и русские буквы, при `LC_ALL=C PYTHONUTF8=0` и с таймером, удалённым из модуля
`signal` Python, как в Windows, — на верном ноутбуке, на ноутбуке с ошибкой и на зависающем ядре.
Настоящие Windows и macOS в автоматические тесты курса не входят.
""",
}


def student_readme(lang: str, *, torch_version: str) -> str:
    """The kit's README.md for the ``lang`` assignment: that language first, then the other."""
    if lang not in sources.LANGS:
        raise ValueError(f"student_readme: `lang` must be one of {sources.LANGS}, got {lang!r}")
    names = {
        "assignment": sources.NOTEBOOK_NAMES["assignment", lang],
        "lab": sources.NOTEBOOK_NAMES["lab", lang],
        "folder": sources.ASSIGNMENTS[lang],
        "torch": torch_version,
    }
    order = sorted(sources.LANGS, key=lambda other: other != lang)
    title = " / ".join(README_TITLE[other]["title"] for other in order)
    subtitle = " / ".join(README_TITLE[other][lang].format(**names) for other in order)
    # Each half's table from the notebooks of its own language (their points are the same:
    # one builder writes both, tests/autograder/assign/test_points.py compares them).
    tables = {other: points.parts_table(*notebooks.notebooks_of(other), other) for other in order}
    return f"# {title}\n\n{subtitle}\n\n" + "\n".join(README_TEXT[other].format(**names, points=tables[other]) for other in order)


README_TITLE = {
    "en": {
        "title": "Module 5: learning from fixed data",
        "en": "Assignment `{folder}`, notebooks in English",
        "ru": "Assignment `{folder}`, notebooks in Russian",
    },
    "ru": {
        "title": "Модуль 5: обучение на фиксированных данных",
        "en": "Задание `{folder}`, ноутбуки на английском",
        "ru": "Задание `{folder}`, ноутбуки на русском",
    },
}
