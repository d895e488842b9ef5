"""The lab notebook's words (EN/RU): section introductions, questions and model answers.

Kept apart from :mod:`autograder.assign.lab_source` (the cells' code) so text and code
can be edited independently; the code is identical in both languages.

A figure measured by the lab is never typed here: a model answer cites it as
``{{claim:ID:FIELD:SPEC}}`` and the notebook builder fills it from the lab report
(:mod:`autograder.assign.claims`, ``docs/lab-results/claims.json``, the pinned
five-seed full-profile run). Each question asks about something the student can see:
the lines printed by their own run (smoke profile by default) or the pinned figures.
"""
from __future__ import annotations

from autograder.export.solutions import citation as _cite

TEXT = {
    "en": {
        "title": "# Module 5 capstone lab: one environment, four ways to learn from fixed data\n\n"
                 "The loops here are complete; they train with **your** kernels: the numpy ones from the assignment "
                 "notebook in this folder (fill it in first) and four torch ports you write below. By default the "
                 "loops run a short smoke profile; set `RL_LLM_M5_PROFILE=full` before starting Jupyter for the full "
                 "runs.\n\n"
                 "**What this lab asks of you.** (1) Four torch ports of your kernels, in section 5a (answer "
                 "cells, each followed by its check); they are not graded on their own, but sections 5b, 6, 7 and 8 "
                 "train with them. (2) Written answers to the six questions after sections 2, 3, 5b, 6, 7 and 8, "
                 "graded by hand. Run the notebook top to bottom (*Kernel → Restart & Run All*): a section that needs "
                 "a kernel or a port you have not written yet prints one line saying what to implement and where, "
                 "and the rest of the lab still runs.\n\n"
                 "Two kinds of numbers appear below, and they differ on purpose. The **printed lines** come from "
                 "**your run** (smoke profile unless you chose full): short, one seed, noisy. The **figures** show "
                 "the **pinned full-profile run** shipped with the course, so they look the same in both profiles; "
                 "each figure's title says which run it shows. When your numbers and a figure disagree, that is "
                 "usually the difference between a short run and a long one, not a bug. Answer each question about "
                 "what you can see, and say which of the two you are reading.",
        "environment": "## 1. The environment and its transition contract\n\nKeyDoorGrid: picking up the key opens "
                       "the door, traps end an episode for real (`terminated`), and the step limit only cuts it "
                       "(`truncated`, which still bootstraps). One world serves every section, so the same "
                       "bootstrap masks are tested by imitation, online DQN and offline learning.",
        "dagger": "## 2. Behavior cloning, then DAgger\n\nThe first learner copies a few expert episodes. Each DAgger "
                  "round runs the current learner, asks the expert to label the states the learner itself reached, "
                  "adds them to the data and retrains. More expert labels help any learner, so the comparison that "
                  "isolates DAgger's idea is the one at an **equal label budget**: cloning trained on as many "
                  "expert labels as DAgger used, but all of them on expert states.",
        "dqn": "## 3. DQN and Double DQN\n\nReplay, a target network and epsilon-greedy collection, with your target "
               "kernels. The replay buffer is warm-started with noisy expert episodes because the reward is sparse "
               "(a course choice, not part of vanilla DQN).",
        "log": "## 4. Look at the fixed log first\n\nAction counts and outcomes say more than a method name. Your "
               "`behavior_support_mask` marks the actions the log supports. Coverage is an identifiability "
               "constraint: what the log does not contain cannot be learned from it, by any method. Everything "
               "in sections 5 and 6 is a different answer to the question of what to do where the log is silent.",
        "ports": "## 5a. Port the four losses to torch\n\nThe offline learners backpropagate through these losses. "
                 "Write each one with torch operations so autograd works; the check below compares values and "
                 "gradients with your numpy kernel on random inputs.",
        "offline": "## 5b. One log, several guards against extrapolation\n\nNaive offline DQN, action restriction, CQL "
                   "and IQL, all trained on the same log with your kernels and ports. They guard different things: "
                   "restriction distrusts rare actions, CQL distrusts the values of all actions relative to the "
                   "logged ones, IQL never evaluates an action the log lacks. Read the outcomes with two cautions. "
                   "Equal returns do not make two methods the same: they can reach the same policy for different "
                   "reasons, and differ as soon as the log or the seed changes. And one favorable seed is not a "
                   "ranking of methods. To see the mechanism rather than the outcome, compare each method's "
                   "*learned* value of its greedy action with the *true* value of that action.",
        "fqe": "## 6. FQE needs validation too\n\nFitted Q evaluation keeps the Bellman backup but replaces the max "
               "over next actions by the average under the policy being evaluated: it turns the improvement "
               "problem into an evaluation problem. That removes the max's optimism, but not the approximation "
               "error or the coverage error: FQE is still a model fitted to the log. The figure puts each estimate "
               "next to the simulator's value of the same policy; the gap between the two bars is FQE's error.",
        "dt": "## 7. Decision Transformer: a requested return is a condition\n\nTrained with your `return_to_go` "
              "and your torch NLL, then asked for a range of returns. The dashed diagonal (achieved = requested) "
              "is a reference line, not a theorem: nothing in the training objective promises that the model "
              "meets a request. Before reading the sweep, look at the distribution of returns in the log: the "
              "model can only imitate returns that some logged episodes actually reached.",
        "language": "## 8. A small ILQL-like token pipeline\n\nPrefix = state, next token = action, reward at the end "
                    "of the response (1 for the exact sum, partial credit for correct leading digits). One log "
                    "feeds three methods. **Behavior cloning** copies the annotator (your masked token NLL). The "
                    "other two share an **ILQL-like critic**: token-level Q and V on one small recurrent network, "
                    "Q regressed on r + γ V(next prefix), V an upper expectile of a slowly updated copy of Q, and a "
                    "CQL penalty on Q. **Advantage-weighted cloning** trains a new policy with weights "
                    "exp(β(Q − V)), capped; **ILQL-like decoding** trains nothing more and, at each step, picks the "
                    "token that maximizes the cloned policy's log-probability plus β(Q − V). This is ILQL ("
                    + _cite("snell2022", "en") + ") in reduced form.\n\n"
                    "How the log is built matters. The annotator is noisy on purpose: for every prompt its most "
                    "likely answer is a consistent slip (the right sum plus one), the exact answer is less "
                    "likely, and the rest are verbose or random. Cloning copies the most likely answer, so it "
                    "loses **by construction**; the instructive comparison is between the two uses of the critic. "
                    "The task and model are tiny: the structure is the one large models use, the scale is a toy.",
        "takeaways": "## 9. Takeaways: where the statistical regime changes\n\n"
                     "The point of the lab is to see where the kind of claim the data can support changes.\n\n"
                     "- **Demonstrations** support claims about the states the expert visits. Off those states, "
                     "cloning has no evidence, and errors compound.\n"
                     "- **Fresh interaction** (DAgger's expert queries, DQN's new episodes) puts data on the "
                     "learner's own states, so its mistakes are seen and corrected.\n"
                     "- **An immutable log** supports claims only where it has coverage. Every offline method is a "
                     "choice of what to do beyond it: restrict, penalize, stay in-sample or condition; and every "
                     "estimate made from the log, FQE's included, is a model that needs checking.\n"
                     "- **Conditioning is not control**: a Decision Transformer's request is an input, and "
                     "token-level value learning is the same machinery applied to prefixes.\n\n"
                     "The cell prints these conclusions and the interpretation limits recorded with the pinned "
                     "artifacts.",
        "answer": "*Your answer (graded by hand):*",
        "questions": {
            "dagger": "**Question.** In the pinned results, compare behavior cloning and DAgger at the same number "
                      "of expert labels. What does DAgger change about the training data, and what does it need "
                      "that plain cloning does not?",
            "dqn": "**Question.** Does Double DQN beat DQN in your printed run, and in the pinned curves? What would "
                   "you need before claiming it does in general?",
            "offline": "**Question.** Which methods tie in the pinned figure, and does a tie mean they learned the "
                       "same thing? For naive DQN, CQL and IQL, compare the learned value of the greedy action with "
                       "its true value: what does each method protect, and how?",
            "fqe": "**Question.** Which policy has the largest FQE error in your printed run, and which in the pinned "
                   "figure? Name the mechanism that can make FQE's error large, and say whether it explains both.",
            "dt": "**Question.** Look at the histogram of the log's returns and at the sweep. Which requests change "
                  "the achieved return, and what happens to requests that fall between the two groups of logged "
                  "returns, or above the best one?",
            "language": "**Question.** How do the three methods compare in your run and in the pinned figure? Given "
                        "how the log was built, which result was predictable, and when should the ILQL-like decoder "
                        "beat advantage-weighted cloning?",
        },
        "answers": {
            "dagger": "Cloning trains only on the expert's states; once the learner errs it reaches states with no "
                      "labels and its errors compound (distribution shift). DAgger runs the learner, has the "
                      "expert label the states the learner actually reaches and retrains on the aggregate, so its "
                      "labels sit on its own state distribution; for a no-regret learner the cost then grows "
                      "linearly in the horizon instead of quadratically (" + _cite("ross2011", "en") + "). The "
                      "number of labels is a separate lever, which is why the lab compares the two at an equal "
                      "budget: in the pinned runs cloning reaches a success rate of "
                      "{{claim:dagger.bc_equal_budget_success:mean_sd:.2f}} and DAgger "
                      "{{claim:dagger.dagger_equal_budget_success:mean_sd:.2f}} (mean ± sd over "
                      "{{claim:dagger.dagger_equal_budget_success:n_seeds}} seeds). On this small grid that "
                      "difference is small and the per-seed results overlap, so most of the gap in the round-by-round "
                      "curve (cloning on {{claim:dagger.bc_labels:mean:.0f}} labels, DAgger's last round on "
                      "{{claim:dagger.dagger_labels:mean:.0f}}) comes from having more labels, not from where they "
                      "were taken. The advantage should grow with the horizon and when demonstrations cover only a "
                      "narrow tube of states. DAgger needs an expert who can "
                      "be queried on arbitrary states during training, which plain cloning never does.",
            "dqn": "A short smoke run on one seed settles nothing: the curves are noisy. In the pinned report over "
                   "{{claim:dqn.dqn_success:n_seeds}} seeds, greedy success is {{claim:dqn.dqn_success:mean_sd:.2f}} for DQN and "
                   "{{claim:dqn.double_success:mean_sd:.2f}} for Double DQN. A general claim needs several seeds, "
                   "a spread or confidence interval and the same budget for both, on more than one task. Double DQN "
                   "reduces the upward bias of the max (and can underestimate instead); that need not change "
                   "success on a task where the greedy ranking is already right.",
            "offline": "Behavior cloning, CQL and IQL reach the same return "
                       "({{claim:offline.return.behavior_cloning:mean:.2f}}, {{claim:offline.return.cql:mean:.2f}} "
                       "and {{claim:offline.return.iql:mean:.2f}} in the pinned report), yet they learned different "
                       "things, and the values show it. Naive DQN's learned value of its greedy action, "
                       "{{claim:offline.greedy_q_learned.naive_dqn:mean_sd:.2f}}, is far above the true value "
                       "{{claim:offline.greedy_value_true.naive_dqn:mean_sd:.2f}}: the max picks actions the log "
                       "never contradicts, and bootstrapping spreads the error. CQL's learned value, "
                       "{{claim:offline.greedy_q_learned.cql:mean_sd:.2f}}, is also above its true value "
                       "{{claim:offline.greedy_value_true.cql:mean_sd:.2f}}: with this network and penalty weight "
                       "the lower bound CQL guarantees for a large enough weight does not hold in level. CQL protects "
                       "by ranking: logged actions are pushed up relative to the rest, so the greedy action is a "
                       "supported one even though its value is overstated. IQL's learned value, "
                       "{{claim:offline.greedy_q_learned.iql:mean_sd:.2f}} against "
                       "{{claim:offline.greedy_value_true.iql:mean_sd:.2f}}, is the closest, because it never "
                       "evaluates an action outside the log; its policy only reweights logged actions.",
            "fqe": "It depends on the run, and on coverage. FQE evaluates a policy by bootstrapping from its own "
                   "estimates at the actions that policy takes; where the log rarely contains those actions, no "
                   "target ever corrects the estimate. Naive DQN's greedy policy takes exactly such actions, so in "
                   "the pinned full run its error is the largest ({{claim:fqe.abs_error.naive_dqn:mean_sd:.2f}}, "
                   "against {{claim:fqe.abs_error.iql:mean_sd:.2f}} for IQL, whose policy is fit only to logged actions). "
                   "In a short smoke run the largest error can belong to a well-covered policy such as IQL's: with "
                   "few FQE iterations and a small log, the error reflects an unfinished fit and sampling noise, "
                   "not coverage. Coverage explains the pinned ordering; the smoke ordering says the estimate had "
                   "too little data or training. Either way FQE is a fitted model and needs the same validation as "
                   "the policies it evaluates.",
            "dt": "The log's returns form two groups with nothing between them: episodes that end in a trap "
                  "(strongly negative returns) and episodes that reach the goal (positive returns below one). "
                  "Requests inside the lower group reproduce failing behavior. In the gap the mean return does "
                  "change with the request, but a mean there is not an episode that earned that return: it "
                  "averages failing and succeeding episodes, and the request mostly shifts their proportion. "
                  "Higher up the curve stops following the request altogether: in the pinned run it reads "
                  "{{claim:dt.achieved.0.25:mean:.2f}} for a request in the upper part of the gap, "
                  "{{claim:dt.achieved.0.75:mean:.2f}} for one inside the upper group and "
                  "{{claim:dt.achieved.2.00:mean:.2f}} for the highest request, far above anything logged. There is "
                  "no smooth rise to read off the diagonal: the model never saw a return in the gap, cannot "
                  "stitch an episode better than the log holds, and treats the request as an input, not a "
                  "guarantee (" + _cite("brandfonbrener2022", "en") + ").",
            "language": "Cloning loses by construction: the annotator's most likely answer is the slip, and "
                        "cloning copies it (exact match {{claim:language.exact_match.behavior_cloning:mean_sd:.2f}} "
                        "in the pinned report). Advantage-weighted cloning and the ILQL-like decoder tie "
                        "({{claim:language.exact_match.advantage_weighted_bc:per_seed:.2f}} and "
                        "{{claim:language.exact_match.ilql_like:per_seed:.2f}} per seed): both use the same critic, "
                        "and the exact answer appears whole in the log for every prompt, so both only need to "
                        "re-rank logged tokens. The decoder should pull ahead when the best answer is rare but its "
                        "prefix steps are in the data, spread over different responses: the expectile V carries the "
                        "value of the best continuation back to the shared prefix, so decoding with β(Q − V) can "
                        "stitch pieces no single response contains and assign credit across tokens, while weighted "
                        "cloning must fit a policy to a handful of capped-weight examples (" + _cite("snell2022", "en") + ").",
        },
    },
    "ru": {
        "title": "# Итоговая лабораторная модуля 5: одна среда, четыре способа учиться на фиксированных данных\n\n"
                 "Циклы обучения здесь готовы; они используют **ваши** ядра: numpy-ядра из ноутбука задания в этой "
                 "папке (сначала заполните его) и четыре переноса на torch, которые вы напишете ниже. По умолчанию "
                 "запускается короткий профиль smoke; чтобы получить полные прогоны, задайте "
                 "`RL_LLM_M5_PROFILE=full` до запуска Jupyter.\n\n"
                 "**Что нужно сделать в лабораторной.** (1) Четыре переноса ваших ядер на torch в разделе 5a "
                 "(ячейки ответа, под каждой — её проверка); отдельно они не оцениваются, но на них обучаются "
                 "разделы 5b, 6, 7 и 8. (2) Письменные ответы на шесть вопросов после разделов 2, 3, 5b, 6, 7 и 8; "
                 "они проверяются вручную. Выполняйте ноутбук сверху вниз (*Kernel → Restart & Run All*): раздел, "
                 "которому нужно ещё не написанное ядро или перенос, печатает одну строку — что и где реализовать, — "
                 "а остальная часть лабораторной выполняется.\n\n"
                 "Ниже встречаются числа двух видов, и расходятся они не случайно. **Напечатанные строки** — это "
                 "**ваш прогон** (профиль smoke, если вы не выбрали full): короткий, с одним seed, шумный. "
                 "**Графики** показывают **зафиксированный прогон полного профиля**, который поставляется с курсом, "
                 "поэтому в обоих профилях они одинаковы; в заголовке каждого графика сказано, какой прогон на нём. "
                 "Если ваши числа расходятся с графиком, обычно это разница между коротким и длинным прогоном, а не "
                 "ошибка. Отвечайте на вопросы о том, что видите, и указывайте, на что именно смотрите.",
        "environment": "## 1. Среда и контракт перехода\n\nKeyDoorGrid: ключ открывает дверь, ловушки по-настоящему "
                       "завершают эпизод (`terminated`), а лимит шагов лишь усекает его (`truncated`, бутстрэп "
                       "продолжается). Одна и та же среда служит всем разделам, поэтому одни и те же маски "
                       "бутстрэпа проверяются и в имитации, и в онлайн-DQN, и в офлайн-обучении.",
        "dagger": "## 2. Клонирование поведения, затем DAgger\n\nПервый ученик копирует несколько эпизодов эксперта. "
                  "В каждом раунде DAgger текущий ученик действует сам, эксперт размечает состояния, до которых тот "
                  "дошёл, они добавляются к данным, и ученик обучается заново. Больше меток эксперта помогает любому "
                  "ученику, поэтому идею DAgger выделяет только сравнение **при равном числе меток**: клонирование, "
                  "обученное на стольких же метках эксперта, сколько использовал DAgger, но только на состояниях "
                  "эксперта.",
        "dqn": "## 3. DQN и Double DQN\n\nБуфер воспроизведения, целевая сеть и epsilon-жадный сбор данных; цели "
               "считают ваши ядра. Из-за редкой награды буфер заранее заполняется зашумлёнными эпизодами эксперта (решение курса, "
               "а не часть обычного DQN).",
        "log": "## 4. Сначала посмотрите на журнал\n\nЧастоты действий и исходы говорят больше, чем название метода. "
               "Ваша `behavior_support_mask` отмечает действия, которые журнал поддерживает. Покрытие — это "
               "ограничение идентифицируемости: чего нет в журнале, того по нему не выучить никаким методом. Всё, "
               "что происходит в разделах 5 и 6, — разные ответы на вопрос, что делать там, где журнал молчит.",
        "ports": "## 5a. Перенесите четыре функции потерь на torch\n\nОфлайн-алгоритмы обучаются обратным распространением "
                 "через эти функции. Напишите каждую на операциях torch, чтобы работал autograd; проверка ниже сравнивает "
                 "значения и градиенты с вашим numpy-ядром на случайных входах.",
        "offline": "## 5b. Один журнал, разные защиты от экстраполяции\n\nНаивный офлайн-DQN, ограничение действий, CQL "
                   "и IQL обучаются на одном журнале с вашими ядрами и переносами. Защищают они разное: ограничение "
                   "не доверяет редким действиям, CQL не доверяет ценностям всех действий относительно записанных, "
                   "IQL вообще не оценивает действий, которых нет в журнале. Читая результаты, помните о двух "
                   "оговорках. Одинаковая отдача не делает методы одинаковыми: они могут прийти к одной политике по "
                   "разным причинам и разойтись, как только изменится журнал или seed. И один удачный seed — не "
                   "рейтинг методов. Чтобы увидеть механизм, а не только исход, сравните *выученную* ценность "
                   "жадного действия каждого метода с *истинной* ценностью этого действия.",
        "fqe": "## 6. FQE тоже требует проверки\n\nОценка Q-функции подгонкой (fitted Q evaluation, FQE) сохраняет беллмановское обновление, но заменяет "
               "максимум по следующим действиям средним по оцениваемой политике: задача улучшения превращается в "
               "задачу оценки. Оптимизм максимума при этом уходит, а ошибка аппроксимации и ошибка покрытия "
               "остаются: FQE — по-прежнему модель, подогнанная к журналу. На графике оценка каждой политики стоит "
               "рядом с её ценностью в симуляторе; разница между столбиками и есть ошибка FQE.",
        "dt": "## 7. Decision Transformer: запрошенная отдача — это условие\n\nОбучен с вашим `return_to_go` и вашей "
              "torch-NLL, затем получает запросы разной отдачи. Пунктирная диагональ (получено = запрошено) — "
              "ориентир, а не теорема: ничто в цели обучения не обещает, что модель выполнит запрос. Прежде чем "
              "читать результаты перебора запросов, посмотрите на распределение отдач в журнале: модель может "
              "воспроизвести только ту отдачу, которой действительно достигали какие-то эпизоды журнала.",
        "language": "## 8. Маленький ILQL-подобный конвейер по токенам\n\nПрефикс — состояние, следующий токен — "
                    "действие, награда в конце ответа (1 за точную сумму, частичная — за верные начальные цифры). "
                    "Один журнал, три метода. **Клонирование поведения** копирует разметчика (ваша маскированная "
                    "NLL по токенам). Два других опираются на общего **ILQL-подобного критика**: Q и V на уровне "
                    "токенов на одной небольшой рекуррентной сети; Q регрессируется на r + γ V(следующий префикс), "
                    "V — верхний экспектиль медленно обновляемой копии Q, к Q добавлен штраф CQL. **Клонирование с "
                    "весами преимущества** обучает новую политику с весами exp(β(Q − V)), ограниченными сверху; "
                    "**ILQL-подобное декодирование** ничего больше не обучает и на каждом шаге выбирает токен с "
                    "наибольшей суммой логарифма вероятности клонированной политики и β(Q − V). Это ILQL ("
                    + _cite("snell2022", "ru") + ") в упрощённом виде.\n\n"
                    "Важно, как устроен журнал. Разметчик шумит намеренно: для каждого запроса его самый вероятный "
                    "ответ — устойчивая ошибка (верная сумма плюс один), точный ответ встречается реже, остальные "
                    "ответы многословны или случайны. Клонирование копирует самый вероятный ответ, поэтому проигрывает "
                    "**по построению**; поучительно сравнение двух способов использовать критика. Задача и модель "
                    "крошечные: устройство то же, что у больших моделей, масштаб — игрушечный.",
        "takeaways": "## 9. Выводы: где меняется статистический режим\n\n"
                     "Главное в лабораторной — увидеть, где меняется то, какие утверждения данные способны "
                     "подкрепить.\n\n"
                     "- **Демонстрации** подкрепляют утверждения о состояниях, которые посещает эксперт. Вне этих "
                     "состояний у клонирования нет свидетельств, и ошибки накапливаются.\n"
                     "- **Новое взаимодействие** (запросы к эксперту в DAgger, новые эпизоды DQN) даёт данные в "
                     "состояниях самого ученика, поэтому его ошибки видны и исправляются.\n"
                     "- **Неизменный журнал** подкрепляет утверждения только там, где есть покрытие. Каждый "
                     "офлайн-метод — это выбор, что делать за его пределами: ограничивать, штрафовать, оставаться "
                     "внутри выборки или обусловливать; и любая оценка по журналу, включая FQE, — модель, которую "
                     "нужно проверять.\n"
                     "- **Условие — не управление**: запрос Decision Transformer — лишь вход модели, а обучение "
                     "ценностей на уровне токенов — тот же механизм, применённый к префиксам.\n\n"
                     "Ячейка печатает эти выводы и границы интерпретации, записанные вместе с зафиксированными "
                     "артефактами.",
        "answer": "*Ваш ответ (проверяется вручную):*",
        "questions": {
            "dagger": "**Вопрос.** Сравните по зафиксированным результатам клонирование поведения и DAgger при "
                      "одинаковом числе меток эксперта. Что DAgger меняет в обучающих данных и что ему нужно такого, "
                      "чего не требует простое клонирование?",
            "dqn": "**Вопрос.** Обгоняет ли Double DQN обычный DQN в напечатанных результатах вашего прогона и на "
                   "зафиксированных кривых? Что нужно, чтобы утверждать это в общем случае?",
            "offline": "**Вопрос.** Какие методы на зафиксированном графике получают одинаковый результат и значит "
                       "ли это, что они выучили одно и то же? Для наивного DQN, CQL и IQL сравните выученную "
                       "ценность жадного действия с истинной: что защищает каждый метод и каким образом?",
            "fqe": "**Вопрос.** У какой политики ошибка FQE наибольшая в напечатанных результатах вашего прогона и у "
                   "какой — на зафиксированном графике? Назовите механизм, из-за которого ошибка FQE бывает большой, "
                   "и скажите, объясняет ли он оба случая.",
            "dt": "**Вопрос.** Посмотрите на гистограмму отдач в журнале и на результаты перебора запросов. Какие "
                  "запросы меняют полученную отдачу и что происходит с запросами, которые попадают между двумя "
                  "группами отдач журнала или выше лучшей из них?",
            "language": "**Вопрос.** Как соотносятся три метода в вашем прогоне и на зафиксированном графике? Какой "
                        "результат был предсказуем, если учесть, как построен журнал, и когда ILQL-подобное "
                        "декодирование должно обгонять клонирование с весами преимущества?",
        },
        "answers": {
            "dagger": "Клонирование обучается только на состояниях эксперта; ошибившись, ученик попадает в "
                      "неразмеченные состояния, и ошибки накапливаются (сдвиг распределения). DAgger запускает "
                      "ученика, эксперт размечает состояния, до которых тот действительно дошёл, и ученик "
                      "переобучается на объединённых данных, так что метки лежат на его собственном распределении "
                      "состояний; для алгоритма без сожаления (no-regret) стоимость тогда растёт по горизонту "
                      "линейно, а не квадратично (" + _cite("ross2011", "ru") + "). Число меток — отдельный рычаг, "
                      "поэтому лабораторная сравнивает методы при равном бюджете: в зафиксированных прогонах "
                      "клонирование достигает доли успехов {{claim:dagger.bc_equal_budget_success:mean_sd:.2f}}, а "
                      "DAgger — {{claim:dagger.dagger_equal_budget_success:mean_sd:.2f}} (среднее ± стандартное "
                      "отклонение по {{claim:dagger.dagger_equal_budget_success:n_seeds}} seed). На этой маленькой "
                      "сетке разница невелика, а результаты по seed перекрываются, так что бо́льшая часть разрыва на "
                      "кривой по раундам (клонирование на {{claim:dagger.bc_labels:mean:.0f}} метках, последний раунд "
                      "DAgger на {{claim:dagger.dagger_labels:mean:.0f}}) объясняется числом меток, а не тем, где они "
                      "взяты. Преимущество должно расти с горизонтом и тогда, когда демонстрации покрывают лишь узкую "
                      "трубку состояний. DAgger нужен "
                      "эксперт, которого можно спрашивать о произвольных состояниях во время обучения; простому "
                      "клонированию это не нужно.",
            "dqn": "Короткий прогон smoke с одним seed ничего не решает: кривые шумные. В зафиксированном отчёте по "
                   "{{claim:dqn.dqn_success:n_seeds}} seed доля успехов жадной политики — {{claim:dqn.dqn_success:mean_sd:.2f}} у DQN и "
                   "{{claim:dqn.double_success:mean_sd:.2f}} у Double DQN. Для общего утверждения нужны "
                   "несколько seed, разброс или доверительный интервал, одинаковый бюджет и не одна задача. Double "
                   "DQN уменьшает смещение максимума вверх (и может, наоборот, недооценивать); на задаче, где "
                   "жадное ранжирование и так верно, доля успехов от этого может не измениться.",
            "offline": "Клонирование поведения, CQL и IQL получают одинаковую отдачу "
                       "({{claim:offline.return.behavior_cloning:mean:.2f}}, {{claim:offline.return.cql:mean:.2f}} "
                       "и {{claim:offline.return.iql:mean:.2f}} в зафиксированном отчёте), но выучили они разное, и "
                       "это видно по ценностям. Выученная наивным DQN ценность жадного действия, "
                       "{{claim:offline.greedy_q_learned.naive_dqn:mean_sd:.2f}}, намного выше истинной, "
                       "{{claim:offline.greedy_value_true.naive_dqn:mean_sd:.2f}}: максимум выбирает действия, "
                       "которым журнал ничего не противопоставляет, а бутстрэп разносит ошибку дальше. Выученная "
                       "ценность CQL, {{claim:offline.greedy_q_learned.cql:mean_sd:.2f}}, тоже выше истинной, "
                       "{{claim:offline.greedy_value_true.cql:mean_sd:.2f}}: с этой сетью и этим весом штрафа нижняя "
                       "граница, которую CQL гарантирует при достаточно большом весе, по уровню не выполняется. CQL "
                       "защищает ранжированием: записанные действия поднимаются относительно остальных, так что "
                       "жадное действие опирается на данные, хотя его ценность завышена. У IQL выученная ценность, "
                       "{{claim:offline.greedy_q_learned.iql:mean_sd:.2f}} при истинной "
                       "{{claim:offline.greedy_value_true.iql:mean_sd:.2f}}, ближе всего к истине, потому что метод "
                       "никогда не оценивает действия вне журнала; его политика лишь перевзвешивает записанные "
                       "действия.",
            "fqe": "Это зависит от прогона и от покрытия. FQE оценивает политику бутстрэпом от собственных оценок в "
                   "тех действиях, которые политика выбирает; где таких действий в журнале мало, ни одна цель "
                   "оценку не исправляет. Жадная политика наивного DQN выбирает как раз такие действия, поэтому в "
                   "зафиксированном полном прогоне её ошибка наибольшая "
                   "({{claim:fqe.abs_error.naive_dqn:mean_sd:.2f}} против {{claim:fqe.abs_error.iql:mean_sd:.2f}} "
                   "у IQL, чья политика обучена только на записанных действиях). В коротком прогоне smoke наибольшая "
                   "ошибка может оказаться у хорошо покрытой политики, например у IQL: при малом числе итераций FQE "
                   "и маленьком журнале ошибка отражает недоученную модель и шум выборки, а не покрытие. Покрытие "
                   "объясняет порядок в зафиксированном прогоне; порядок в smoke говорит лишь о том, что данных или "
                   "обучения было мало. В любом случае FQE — обученная модель, и её нужно проверять так же, как "
                   "оцениваемые ею политики.",
            "dt": "Отдачи журнала образуют две группы, между которыми ничего нет: эпизоды, закончившиеся в ловушке "
                  "(сильно отрицательная отдача), и эпизоды, дошедшие до цели (положительная отдача меньше единицы). Запросы "
                  "внутри нижней группы воспроизводят неудачное поведение. В промежутке средняя отдача от запроса "
                  "зависит, но среднее здесь — не эпизод, получивший такую отдачу: оно усредняет неудачные и "
                  "успешные эпизоды, и запрос в основном меняет их соотношение. Выше кривая вообще перестаёт "
                  "следовать запросу: в зафиксированном прогоне она даёт {{claim:dt.achieved.0.25:mean:.2f}} для "
                  "запроса в верхней части промежутка, {{claim:dt.achieved.0.75:mean:.2f}} для запроса внутри "
                  "верхней группы и {{claim:dt.achieved.2.00:mean:.2f}} для самого высокого запроса, намного выше "
                  "всего, что есть в журнале. Плавного роста вдоль диагонали нет: отдач из промежутка модель не "
                  "видела, сшить эпизод лучше тех, что есть в журнале, не может, а запрос для неё — вход, а не "
                  "гарантия (" + _cite("brandfonbrener2022", "ru") + ").",
            "language": "Клонирование проигрывает по построению: самый вероятный ответ разметчика — ошибка, и "
                        "клонирование её копирует (доля точных ответов "
                        "{{claim:language.exact_match.behavior_cloning:mean_sd:.2f}} в зафиксированном отчёте). "
                        "Клонирование с весами преимущества и ILQL-подобное декодирование идут вровень "
                        "({{claim:language.exact_match.advantage_weighted_bc:per_seed:.2f}} и "
                        "{{claim:language.exact_match.ilql_like:per_seed:.2f}} по seed): у них один и тот же критик, "
                        "а точный ответ для каждого запроса целиком встречается в журнале, так что обоим достаточно "
                        "переранжировать записанные токены. Декодирование должно вырваться вперёд, когда лучший "
                        "ответ редок, но его начальные шаги есть в данных, разбросанные по разным ответам: "
                        "экспектиль V переносит ценность лучшего продолжения на общий префикс, поэтому "
                        "декодирование с β(Q − V) может сшить куски, которых нет ни в одном ответе целиком, и "
                        "распределить вклад по токенам, тогда как взвешенному клонированию приходится подгонять "
                        "политику под горстку примеров с ограниченными весами (" + _cite("snell2022", "ru") + ").",
        },
    },
}
