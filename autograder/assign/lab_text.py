"""The lab notebook's words (EN/RU): section introductions, questions and model answers.

Kept apart from :mod:`autograder.assign.lab_source` (the cells' code) so text and code
can be edited independently; the code is identical in both languages.
"""
from __future__ import annotations

TEXT = {
    "en": {
        "title": "# Module 5 capstone lab: one environment, four ways to learn from fixed data\n\n"
                 "The loops here are complete; they train with **your** kernels: the numpy ones from the assignment "
                 "notebook in this folder (fill it in first) and four torch ports you write below. By default the "
                 "loops run a short smoke profile; set `RL_LLM_M5_PROFILE=full` before starting Jupyter for the full "
                 "runs. The figures show the pinned full-profile results, so they look the same in both profiles.",
        "environment": "## 1. The environment and its transition contract\n\nKeyDoorGrid: picking up the key opens "
                       "the door, traps end an episode for real (`terminated`), and the step limit only cuts it "
                       "(`truncated`, which still bootstraps).",
        "dagger": "## 2. Behavior cloning, then DAgger\n\nThe first learner copies a few expert episodes; each DAgger "
                  "round lets the expert label the states the learner itself reaches.",
        "dqn": "## 3. DQN and Double DQN\n\nReplay, a target network and epsilon-greedy collection, with your target "
               "kernels. The replay buffer is warm-started with noisy expert episodes because the reward is sparse "
               "(a course choice, not part of vanilla DQN).",
        "log": "## 4. Look at the fixed log first\n\nAction counts and outcomes say more than a method name. Your "
               "`behavior_support_mask` marks the actions the log supports.",
        "ports": "## 5a. Port the four losses to torch\n\nThe offline learners backpropagate through these losses. "
                 "Write each one with torch operations so autograd works; the check below compares values and "
                 "gradients with your numpy kernel on random inputs.",
        "offline": "## 5b. One log, several guards against extrapolation\n\nNaive offline DQN, action restriction, CQL "
                   "and IQL, all trained on the same log with your kernels and ports.",
        "fqe": "## 6. FQE needs validation too\n\nFitted Q evaluation replaces the max by the evaluated policy's "
               "average; it is still a fitted model, so compare it with the simulator.",
        "dt": "## 7. Decision Transformer: a requested return is a condition\n\nTrained with your `return_to_go` "
              "and your torch NLL; then asked for a range of returns.",
        "language": "## 8. A small ILQL-like token pipeline\n\nPrefix = state, next token = action, reward at the end "
                    "of the response. The task and model are tiny: the mechanics are real, the scale is not.",
        "takeaways": "## 9. Takeaways",
        "answer": "*Your answer (graded by hand):*",
        "questions": {
            "dagger": "**Question.** Why can DAgger improve on behavior cloning with the same expert, and what does "
                      "it need that plain cloning does not?",
            "dqn": "**Question.** Does Double DQN beat DQN in your run? What would you need before claiming it does "
                   "in general?",
            "offline": "**Question.** Pick two offline methods and say which object each one distrusts (actions, "
                       "values, the policy update).",
            "fqe": "**Question.** Where does the FQE estimate differ most from the simulator, and why can this "
                   "happen with a fixed log?",
            "dt": "**Question.** What happens when the requested return exceeds anything in the log? Explain.",
            "language": "**Question.** Which parts of this pipeline would change for a real language model, and "
                        "which stay the same?",
        },
        "answers": {
            "dagger": "Cloning only sees expert states; once the learner errs it reaches states with no labels and "
                      "errors compound. DAgger collects the learner's own states and has the expert label them, so the "
                      "training distribution moves towards the states the learner visits. It needs an expert that can "
                      "be queried on arbitrary states during training.",
            "dqn": "One seed and a short run do not settle it; the curves are noisy. A claim needs several seeds, a "
                   "confidence interval and the same budget for both; Double DQN mainly removes the upward bias of the "
                   "max, which may or may not change success on this task.",
            "offline": "Action restriction distrusts actions the behavior policy rarely takes (it maximizes only over "
                       "supported ones); CQL distrusts the values of all actions and pushes them down relative to the "
                       "logged one; IQL never queries unseen actions in its targets and only reweights logged actions "
                       "in the policy update.",
            "fqe": "Where the evaluated policy takes actions the log rarely contains, FQE bootstraps from values it "
                   "never saw corrected, so its error is largest there; coverage limits evaluation as much as control.",
            "dt": "The achieved return plateaus near the best returns in the log: the model never saw such a "
                  "condition, so it extrapolates; the request is an input, not a guarantee.",
            "language": "A real model replaces the small network by a transformer, the synthetic rewards by a learned "
                        "or verified reward and the vocabulary by real tokens; the state/action view, the masked "
                        "token loss, the token-level Q/V recursion and the advantage-weighted policy stay.",
        },
    },
    "ru": {
        "title": "# Итоговая лабораторная модуля 5: одна среда, четыре способа учиться на фиксированных данных\n\n"
                 "Циклы обучения здесь готовы; они используют **ваши** ядра: numpy-ядра из ноутбука задания в этой "
                 "папке (сначала заполните его) и четыре переноса на torch, которые вы напишете ниже. По умолчанию "
                 "запускается короткий профиль smoke; задайте `RL_LLM_M5_PROFILE=full` до запуска Jupyter для полного. "
                 "Графики строятся по закреплённым результатам полного профиля, поэтому они одинаковы в обоих профилях.",
        "environment": "## 1. Среда и контракт перехода\n\nKeyDoorGrid: ключ открывает дверь, ловушки по-настоящему "
                       "завершают эпизод (`terminated`), а лимит шагов только обрывает его (`truncated`, бутстрэп "
                       "продолжается).",
        "dagger": "## 2. Клонирование поведения, затем DAgger\n\nПервый ученик копирует несколько эпизодов эксперта; "
                  "в каждом раунде DAgger эксперт размечает состояния, до которых доходит сам ученик.",
        "dqn": "## 3. DQN и Double DQN\n\nБуфер воспроизведения, целевая сеть и epsilon-жадный сбор, с вашими ядрами "
               "целей. Из-за редкой награды буфер заранее заполняется зашумлёнными эпизодами эксперта (решение курса, "
               "а не часть обычного DQN).",
        "log": "## 4. Сначала посмотрите на журнал\n\nЧастоты действий и исходы говорят больше, чем название метода. "
               "Ваша `behavior_support_mask` отмечает действия, которые журнал поддерживает.",
        "ports": "## 5a. Перенесите четыре функции потерь на torch\n\nОфлайн-алгоритмы распространяют градиент через "
                 "эти функции. Напишите каждую на операциях torch, чтобы работал autograd; проверка ниже сравнивает "
                 "значения и градиенты с вашим numpy-ядром на случайных входах.",
        "offline": "## 5b. Один журнал, разные защиты от экстраполяции\n\nНаивный офлайн-DQN, ограничение действий, CQL "
                   "и IQL обучаются на одном журнале с вашими ядрами и переносами.",
        "fqe": "## 6. FQE тоже требует проверки\n\nFitted Q evaluation заменяет максимум средним по оцениваемой "
               "политике; это по-прежнему подогнанная модель, поэтому сравните её с симулятором.",
        "dt": "## 7. Decision Transformer: запрошенная отдача — это условие\n\nОбучен с вашим `return_to_go` и вашей "
              "torch-NLL, затем получает запросы разной отдачи.",
        "language": "## 8. Маленький ILQL-подобный конвейер по токенам\n\nПрефикс — состояние, следующий токен — "
                    "действие, награда в конце ответа. Задача и модель крошечные: устройство то же, что у больших моделей, масштаб — игрушечный.",
        "takeaways": "## 9. Выводы",
        "answer": "*Ваш ответ (проверяется вручную):*",
        "questions": {
            "dagger": "**Вопрос.** Почему DAgger может превзойти клонирование поведения с тем же экспертом и что ему "
                      "нужно такого, чего не требует простое клонирование?",
            "dqn": "**Вопрос.** Обгоняет ли Double DQN обычный DQN в вашем запуске? Что нужно, чтобы утверждать это "
                   "в общем случае?",
            "offline": "**Вопрос.** Выберите два офлайн-метода и скажите, чему каждый из них не доверяет (действиям, "
                       "значениям, обновлению политики).",
            "fqe": "**Вопрос.** Где оценка FQE сильнее всего расходится с симулятором и почему так бывает при "
                   "фиксированном журнале?",
            "dt": "**Вопрос.** Что происходит, когда запрошенная отдача выше всего, что есть в журнале? Объясните.",
            "language": "**Вопрос.** Какие части этого конвейера изменятся для настоящей языковой модели, а какие "
                        "останутся прежними?",
        },
        "answers": {
            "dagger": "Клонирование видит только состояния эксперта; ошибившись, ученик попадает в неразмеченные "
                      "состояния, и ошибки накапливаются. DAgger собирает состояния самого ученика и просит эксперта "
                      "их разметить, так что обучающее распределение сдвигается к посещаемым учеником состояниям. "
                      "Нужен эксперт, которого можно спрашивать о произвольных состояниях во время обучения.",
            "dqn": "Одно seed и короткий запуск вопрос не решают: кривые шумные. Для утверждения нужны несколько "
                   "seed, доверительный интервал и одинаковый бюджет; Double DQN в основном убирает смещение "
                   "максимума вверх, что на этой задаче может и не изменить долю успехов.",
            "offline": "Ограничение действий не доверяет редким для поведенческой политики действиям (максимум берётся "
                       "только по поддержанным); CQL не доверяет значениям всех действий и опускает их относительно "
                       "записанного; IQL вообще не запрашивает ненаблюдавшиеся действия в целях и лишь перевзвешивает "
                       "записанные действия при обновлении политики.",
            "fqe": "Там, где оцениваемая политика выбирает редкие в журнале действия: FQE выполняет бутстрэп от значений, "
                   "которые никогда не исправлялись данными, и ошибка там наибольшая; покрытие ограничивает оценку "
                   "так же, как и управление.",
            "dt": "Достигнутая отдача выходит на плато около лучших отдач журнала: такого условия модель не видела и "
                  "экстраполирует; запрос — это вход модели, а не гарантия.",
            "language": "В настоящей модели маленькая сеть заменяется трансформером, синтетическая награда — "
                        "обученной или проверяемой, словарь — настоящими токенами; взгляд «состояние/действие», "
                        "маскированная функция потерь по токенам, рекурсия Q/V по токенам и политика с весами "
                        "преимущества остаются.",
        },
    },
}

