"""The lab notebook's words (EN/RU): section introductions, questions and model answers.

Kept apart from :mod:`autograder.assign.lab_source` (the cells' code) so text and code
can be edited independently; the code is identical in both languages.

A figure measured by the lab is never typed here: a model answer cites it as
``{{claim:ID:FIELD:SPEC}}``, and a difference between methods as ``{{compare:ID}}``
(its paired interval and the verdict it allows); the notebook builder fills both from
the lab report (:mod:`autograder.assign.claims`, ``docs/lab-results/claims.json``, the
pinned 10-seed full-profile run). Each question asks about something the student can
see: the lines printed by their own run (smoke profile by default), the pinned
figures, and the course's numbers printed before the question.
"""

from __future__ import annotations

from autograder.i18n.references import citation as _cite

TEXT = {
    "en": {
        "title": (
            "# Module 5 capstone lab: one environment, four ways to learn from fixed data\n\n"
            "The training loops are written; they train with **your** code: the ten numpy kernels of the "
            "assignment notebook in this folder (the lab reads its saved file: save it after every change) and "
            "four torch ports you write in section 5a. In this course a *kernel* is one of those functions; "
            "Jupyter's *Kernel* menu (Restart & Run All) is something else. Run the notebook top to bottom: a "
            "section that needs code you have not written yet prints one line saying what and where, and the "
            "rest still runs.\n\n"
            "{{points_table}}\n\n"
            "**Two runs, always named.** *Your run* is one seed of the short smoke profile (set "
            "`RL_LLM_M5_PROFILE=full` before starting Jupyter for the full one): it checks that your code "
            "trains, and its numbers are noisy. *The course's run* is the full profile over "
            "{{claim:dqn.dqn_success:n_seeds}} seeds, shipped in `m5_student/data`: every figure and table "
            "says which of the two it shows, and the course's run is always the mean over its seeds with a 95 % "
            "interval. The questions are about the course's run; call "
            "a difference between methods real only where its paired interval excludes zero."
        ),
        "environment": (
            "## 1. The environment and its transition contract\n\nKeyDoorGrid: picking up the key opens "
            "the door, traps end an episode for real (`terminated`), and the step limit only cuts it "
            "(`truncated`, which still bootstraps). One world serves every section, so the same "
            "bootstrap masks are tested by imitation, online DQN and offline learning."
        ),
        "dagger": (
            "## 2. Behavior cloning, then DAgger\n\nThe first learner copies a few expert episodes. Each DAgger "
            "round runs the current learner, asks the expert to label the states the learner itself reached, "
            "adds them to the data and retrains. More expert labels help any learner, so the comparison that "
            "isolates DAgger's idea is the one at an **equal label budget**: cloning trained on as many "
            "expert labels as DAgger used, but all of them on expert states. It runs on a larger grid with more "
            "start cells, and a second figure measures the distribution shift itself: how often each learner "
            "visits states it has no label for, and how often it errs there."
        ),
        "dqn": (
            "## 3. DQN and Double DQN\n\nReplay, a target network and epsilon-greedy collection, with your target "
            "kernels. The replay buffer is warm-started with noisy expert episodes because the reward is sparse "
            "(a course choice, not part of vanilla DQN)."
        ),
        "log": (
            "## 4. Look at the fixed log first\n\nAction counts and outcomes say more than a method name. This log "
            "is mediocre on purpose, as real logs of deployed systems often are: in most episodes the demonstrator "
            "forgets the key and walks straight to the locked door, where it waits (or slips into the trap beside "
            "it); a minority of episodes are the expert's, and a few are random. Your `behavior_support_mask` "
            "marks the actions the log supports. Coverage is an identifiability constraint: what the log does not "
            "contain cannot be learned from it, by any method. Everything in sections 5 and 6 is a different "
            "answer to the question of what to do where the log is silent, or where its most common behavior is "
            "wrong."
        ),
        "ports": (
            "## 5a. Port the four losses to torch\n\nThe offline learners backpropagate through these losses. "
            "Write each one with torch operations so autograd works; the check below compares values and "
            "gradients with your numpy kernel on random inputs."
        ),
        "offline": (
            "## 5b. One log, several guards against extrapolation\n\nNaive offline DQN, action restriction, CQL "
            "and IQL train on the same log with your kernels and ports. Cloning copies each state's most common "
            "action, here the walk to the locked door; a method that learns values from the rewards can prefer "
            "the minority's key-fetching actions instead. The guards differ: restriction distrusts rare actions, "
            "CQL pushes down the values of all actions relative to the logged ones, IQL never evaluates an "
            "action the log lacks. Equal returns do not make two methods the same (they can reach one policy "
            "for different reasons), and one favorable seed is not a ranking of methods: read each method against "
            "cloning through its paired interval, and every return against the expert's (the dashed line). "
            "The last figure shows the mechanism: each method's "
            "*learned* Q minus the *true* Q of its own policy, on the actions the log holds and on those it "
            "never shows."
        ),
        "fqe": (
            "## 6. FQE needs validation too\n\nFitted Q evaluation keeps the Bellman backup but replaces the max "
            "over next actions by the average under the policy being evaluated: it turns the improvement "
            "problem into an evaluation problem. That removes the max's optimism, but not the approximation "
            "error or the coverage error: FQE is still a model fitted to the log. The figure puts each estimate "
            "next to the simulator's value of the same policy; the gap between the two bars is FQE's error."
        ),
        "dt": (
            "## 7. Decision Transformer: a requested return is a condition\n\nTrained with your `return_to_go` "
            "and your torch NLL, then asked for a range of returns. The dashed diagonal (achieved = requested) "
            "is a reference line, not a theorem: nothing in the training objective promises that the model "
            "meets a request. Before reading the sweep, look at the distribution of returns in the log: the "
            "model can only imitate returns that some logged episodes actually reached."
        ),
        "language": (
            "## 8. A small ILQL-like token pipeline\n\nPrefix = state, next token = action, reward at the end "
            "of the response (1 for the exact sum, partial credit for correct leading digits). One log, four "
            "methods:\n\n"
            "- **behavior cloning** copies the annotator (your masked token NLL);\n"
            "- **return-weighted cloning** reads the rewards but learns no value: each logged response weighs "
            "exp(β(G − b)), capped (G its return, b its prompt's mean logged return);\n"
            "- **advantage-weighted cloning** weighs by exp(β(Q − V)) from an **ILQL-like critic** (token-level "
            "Q regressed on r + γ V(next prefix), V an upper expectile of a slow copy of Q, a CQL penalty on Q);\n"
            "- **ILQL-like decoding** trains nothing more: at each step it picks the token that maximizes the "
            "cloned policy's log-probability plus β(Q − V), ILQL ("
        )
        + _cite("snell2022", "en")
        + ") in reduced form.\n\n"
        "The annotator's most likely answer is a consistent slip (the right sum plus one), so cloning loses "
        "**by construction**; the instructive comparisons are rewards alone against the two uses of the critic. "
        "Six **held-out prompts**, sums never in the log, test whether a method learned addition or twelve "
        "answers. The structure is the one large models use; the scale is a toy.",
        "takeaways": (
            "## 9. Takeaways: where the statistical regime changes\n\n"
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
            "artifacts."
        ),
        "answer": "*Your answer (graded by hand):*",
        "questions": {
            "dagger": (
                "**Question.** In the course's run, compare behavior cloning and DAgger at the same label budget "
                "and at the same number of distinct labels (read the paired intervals printed above). Using the distribution-shift figure, "
                "explain where cloning's failures come from. What does DAgger change about the training data, and "
                "what does it need that plain cloning does not?"
            ),
            "dqn": (
                "**Question.** In the course's run, does Double DQN succeed more often than DQN, and does it "
                "overestimate less, as it is designed to? Read the paired intervals printed above. What would you "
                "need before claiming either in general, and what does the side study (a task built for the gap) "
                "add?"
            ),
            "offline": (
                "**Question.** The log's most common behavior walks to the locked door without the key. Which "
                "methods do better than behavior cloning in the course's run (read the paired intervals printed "
                "above, not the heights of the bars), and why can a method that reads the rewards beat imitation "
                "on this log? For naive DQN, CQL and IQL, use the mechanism figure (learned minus true Q on the "
                "actions the log holds and on those it never shows): what does each method protect, and how?"
            ),
            "fqe": (
                "**Question.** In the course's run, which policy has the largest FQE error, and does the paired "
                "interval printed above support ranking it above IQL's? Name the mechanism that can make FQE's "
                "error large, and say what the run would have to show for that mechanism to explain a ranking."
            ),
            "dt": (
                "**Question.** Look at the histogram of the log's returns and at the sweep. Which requests change "
                "the achieved return, and what happens to requests that fall between the groups of logged "
                "returns, or above the best one?"
            ),
            "language": (
                "**Question.** In the course's run, how do the four methods compare on the training prompts and "
                "on the held-out ones (the figure and the numbers printed above)? Given how the log was built, which result was "
                "predictable, what does the critic add to weighting by rewards alone, and when should the "
                "ILQL-like decoder beat advantage-weighted cloning?"
            ),
        },
        "answers": {
            "dagger": (
                "Cloning trains only on the expert's states; once the learner errs it reaches states with no "
                "labels, where its actions are guesses, and its errors compound: the distribution shift behind "
                "the O(εT²) bound ("
            )
            + _cite("ross2010", "en")
            + "). DAgger runs the learner, has the expert label "
            "the states the learner actually reaches and retrains on the aggregate, so its labels sit on its "
            "own state distribution; with a no-regret learner, and when one mistake raises the expert's "
            "cost-to-go by at most u (the task allows recovery), the cost grows as uTε, linearly in the horizon "
            "(" + _cite("ross2011", "en") + "). The number of labels is a separate lever, so the lab compares "
            "the two at an equal budget, on a larger grid with more start cells, where a few demonstrations "
            "cover a narrow tube of the states a learner can reach. In the course's run, at a budget of "
            "{{claim:dagger.equal_budget_labels:mean:.0f}} labels, cloning reaches a success rate of "
            "{{claim:dagger.bc_equal_budget_success:mean_ci:.2f}} and DAgger "
            "{{claim:dagger.dagger_equal_budget_success:mean_ci:.2f}}; DAgger minus cloning: "
            "{{compare:dagger.equal_budget}}. What is equal there is the budget, not the labels: with the same "
            "number of distinct expert labels ({{claim:dagger.matched_labels:mean:.0f}}, all that cloning's "
            "demonstrations hold), DAgger minus cloning is {{compare:dagger.matched_distinct_labels}}; with "
            "demonstrations that slip as the learner does (they then show recoveries, and cloning holds "
            "{{claim:dagger.slipped_bc_labels:mean:.0f}} distinct labels), it is "
            "{{compare:dagger.slipped_demonstrations}}. The shift figure shows the mechanism. The clean demonstrations "
            "hold {{claim:dagger.bc_equal_budget_labels:mean:.0f}} distinct states (more demonstrations "
            "repeat them), and {{claim:dagger.bc_equal_budget_unseen_share:mean_ci:.2f}} of cloning's own "
            "visits fall on states outside them, against "
            "{{claim:dagger.dagger_equal_budget_unseen_share:mean_ci:.2f}} for DAgger (DAgger minus cloning: "
            "{{compare:dagger.equal_budget_unseen_share}}). Cloning's action is non-optimal in "
            "{{claim:dagger.bc_equal_budget_error_seen:mean_ci:.2f}} of its visits to labeled states and in "
            "{{claim:dagger.bc_equal_budget_error_unseen:mean_ci:.2f}} of its visits to the others (difference: "
            "{{compare:dagger.bc_error_unseen_vs_seen}}): what hurts it is where it goes, not how well it "
            "fits its data. On the round-by-round curve (the small grid) the two learners train on different "
            "numbers of labels ({{claim:dagger.bc_labels:mean:.0f}} against "
            "{{claim:dagger.dagger_labels:mean:.0f}}; difference {{compare:dagger.final_vs_round0}}), so that "
            "gap mixes both levers. DAgger needs an expert who can be queried on arbitrary states during "
            "training, which plain cloning never does.",
            "dqn": (
                "Over the course's {{claim:dqn.dqn_success:n_seeds}} seeds, greedy success is "
                "{{claim:dqn.dqn_success:mean_ci:.2f}} for DQN and {{claim:dqn.double_success:mean_ci:.2f}} for "
                "Double DQN; Double DQN minus DQN: {{compare:dqn.double_vs_dqn}}. What Double DQN is designed to "
                "change is the upward bias of the maximum, and the lab measures it directly: the network's Q of its "
                "greedy action minus the exact value of that action, averaged over the states in the buffer, is "
                "{{claim:dqn.dqn_overestimation_mean:mean_ci:.3f}} for DQN and "
                "{{claim:dqn.double_overestimation_mean:mean_ci:.3f}} for Double DQN over training (difference "
                "{{compare:dqn.double_vs_dqn_overestimation_mean}}), and at the end of training the difference is "
                "{{compare:dqn.double_vs_dqn_overestimation_final}}. Decoupling selection from evaluation reduces "
                "the upward bias of a maximum over noisy estimates in expectation; it does not remove it, and it "
                "can underestimate instead ("
            )
            + _cite("vanhasselt2010", "en")
            + "). Where the intervals above contain zero, this run does not show that reduction; and on a task "
            "where the greedy ranking is already right, less bias need not change success. A general claim needs "
            "a difference whose interval excludes zero, the same budget for both, and more than one task. Your "
            "own run is one short seed and settles nothing either way. The side study printed above is a task built "
            "for the gap: a state with many actions whose rewards are noisy with a negative mean. There DQN takes "
            "the bad branch more often early in training and overestimates it more than Double DQN, with paired "
            "intervals above zero; at the end of training the overestimation gap is no longer detectable. The "
            "double estimator reduces the bias where noise and many actions create it, and with it how often the "
            "bad branch is taken.",
            "offline": (
                "Cloning copies the most frequent action of each state, and on this log that is the "
                "key-forgetting walk to the locked door: its greedy policy returns "
                "{{claim:offline.return.behavior_cloning:mean_ci:.2f}}, against the optimum "
                "{{claim:offline.return_optimal:mean:.2f}}. The minority of episodes that fetch the key earn more, "
                "and a method that learns values from the rewards can prefer their actions in the states where the "
                "two behaviors part. Each method minus cloning, paired over the course's seeds: IQL "
                "{{compare:offline.vs_bc.iql}}; restricted DQN {{compare:offline.vs_bc.restricted_dqn}}; CQL "
                "{{compare:offline.vs_bc.cql}}; naive DQN {{compare:offline.vs_bc.naive_dqn}}. Only an interval "
                'that excludes zero supports "better" or "worse"; where it contains zero the run does not show a '
                "difference from cloning. The mechanism figure says why. Naive DQN's target takes a maximum over "
                "all actions, including those the log never shows in a state; no target ever corrects their "
                "values, the maximum picks the largest and bootstrapping spreads it. Learned minus true Q is "
                "{{compare:offline.unlogged_overestimation.naive_dqn}} on unlogged actions and "
                "{{claim:offline.q_logged_error.naive_dqn:mean_ci:.2f}} on the logged pairs, and its largest Q exceeds "
                "the largest possible return (1) in a share {{claim:offline.above_max_share.naive_dqn:mean:.2f}} of the "
                "log's states: errors of this size on both kinds of pairs, where no true Q exceeds 1, mean the "
                "bootstrapped regression diverged. The evidence for the cause is the contrast: restricted DQN, on the "
                "same log with targets over logged actions only, stays close even on actions it never saw "
                "({{claim:offline.q_unlogged_error.restricted_dqn:mean_ci:.2f}}). IQL never evaluates an "
                "unlogged action: V is an upper expectile of the logged actions' Q, and the policy reweights logged "
                "actions by exp(β(Q − V)), so where both plans are logged it can prefer the key-fetching one. "
                "Restricted DQN maximizes only over actions the learned behavior model finds frequent enough; the "
                "expert's action passes that test where the plans part, so it too can be chosen. CQL adds "
                "α(logsumexp_b Q(s, b) − Q(s, a)) for logged pairs, the cross-entropy of a softmax over Q against "
                "the logged action: a cloning term inside the critic, which pulls the greedy action towards the "
                "log's most frequent one, here the wrong one. Nor is its level conservative here: its learned value "
                "of the greedy action is {{claim:offline.greedy_q_learned.cql:mean_ci:.2f}} against a true "
                "{{claim:offline.greedy_value_true.cql:mean_ci:.2f}} ({{compare:offline.cql_level}}), and the "
                "mechanism figure shows where the excess sits: learned minus true Q is "
                "{{claim:offline.q_logged_error.cql:mean_ci:.2f}} on the logged pairs and "
                "{{claim:offline.q_unlogged_error.cql:mean_ci:.2f}} on the unlogged ones, so the penalty raised "
                "the logged actions rather than lowering the rest. CQL's lower "
                "bound ("
            )
            + _cite("kumar2020", "en")
            + ") is for the value of a fixed policy evaluated with a large enough weight, in expectation over "
            "the data's states, and its margin vanishes only where that policy equals the behavior policy; it is "
            "proved for exact and linear function classes. The lab measures another quantity (the learned Q of "
            "CQL's own greedy action against that policy's true value), with a network: it has to be checked, as "
            "here. The α study printed above (its own fresh seeds) shows where CQL sits: at small α it behaves as "
            "naive DQN does, at large α its greedy policy follows cloning's, and no α of the grid is ahead of "
            "cloning in return on this log: the penalty never reads a reward. Which method wins also depends on "
            "what the log is: on a second log, online DQN's replay buffer "
            "(mostly the agent's later, good play), cloning returns {{claim:offline.replay_return.behavior_cloning:mean_ci:.2f}} "
            "and IQL minus cloning is {{compare:offline.replay_vs_bc.iql}}.",
            "fqe": (
                "In the course's run naive DQN's mean error is "
                "{{claim:fqe.abs_error.naive_dqn:mean_ci:.2f}} and IQL's "
                "{{claim:fqe.abs_error.iql:mean_ci:.2f}}; the paired difference is "
                "{{compare:fqe.naive_vs_iql_error}}: the run does not rank the two. The mechanism that can make "
                "FQE's error large is coverage: FQE bootstraps from its own estimates at the actions the evaluated "
                "policy takes, and where the log rarely holds those actions no target ever corrects them. Naive "
                "DQN's greedy policy takes such actions, IQL's only logged ones, so coverage predicts the larger "
                "error for naive DQN; to say that it explains an order, the run would have to show a difference whose "
                "interval excludes zero (more seeds, or errors measured per state against coverage). In a short "
                "smoke run the errors also reflect an unfinished fit and a small log. Either way FQE is a fitted "
                "model and needs the same validation as the policies it evaluates."
            ),
            "dt": (
                "The log's episodes form three groups, by how they ended (the histogram colors them): episodes "
                "that end in a trap (strongly negative returns), a few cut by the time limit (every step cost and "
                "nothing else, so all of them share one negative return) and episodes that reach the goal (positive "
                "returns below one). Between the groups there are no episodes at all. Requests inside the trap "
                "group reproduce failing behavior. Between the groups the mean return does change with the request, "
                "but a mean there is not an episode that earned that return: it averages failing and succeeding "
                "episodes, and the request mostly shifts their proportion. In the pinned run the curve reads "
                "{{claim:dt.achieved.0.25:mean:.2f}} for a request between the groups, "
                "{{claim:dt.achieved.0.75:mean:.2f}} for one inside the goal group and "
                "{{claim:dt.achieved.2.00:mean:.2f}} for the highest request, far above anything logged. Whether "
                "asking for more than the log holds still buys anything is a paired comparison, not a reading of "
                "two dots: the highest request minus the one inside the goal group is "
                "{{compare:dt.saturation}}. Either way there is no smooth rise to read off the diagonal: the model "
                "never saw a return between the groups, cannot stitch an episode better than the log holds, and "
                "treats the request as an input, not a guarantee ("
            )
            + _cite("brandfonbrener2022", "en")
            + ").",
            "language": (
                "Cloning loses by construction: the annotator's most likely answer is the slip, and "
                "cloning copies it (exact match {{claim:language.exact_match.behavior_cloning:mean_ci:.2f}} in "
                "the course's run; the ILQL-like decoder minus cloning: {{compare:language.ilql_vs_bc}}). The "
                "ablation separates where that gain comes from. Rewards alone, without any learned value: "
                "return-weighted cloning minus cloning is {{compare:language.rwbc_vs_bc}}. What the critic adds "
                "to the weights: advantage-weighted minus return-weighted cloning is "
                "{{compare:language.awbc_vs_rwbc}}; what its value heads add at decoding: the ILQL-like decoder "
                "minus return-weighted cloning is {{compare:language.ilql_vs_rwbc}}, and minus advantage-weighted "
                "cloning {{compare:language.ilql_vs_awbc}}. Where an interval says no detectable difference, "
                "this run shows no token-level value learning beyond reward weighting: the exact answer appears "
                "whole in the log for every prompt, so re-ranking logged responses by their reward is enough. "
                "The held-out prompts say what was learned: exact match there is "
                "{{claim:language.heldout_exact_match.ilql_like:mean_ci:.2f}} for the ILQL-like decoder and "
                "{{claim:language.heldout_exact_match.return_weighted_bc:mean_ci:.2f}} for return-weighted "
                "cloning (held-out minus training prompts: {{compare:language.heldout_vs_train.ilql_like}}; the "
                "decoder minus cloning on them: {{compare:language.heldout.ilql_vs_bc}}). Where these sit near "
                "zero, as twelve training prompts lead one to expect, the methods learned twelve answers, not "
                "addition, and nothing here says that any of them generalizes. "
                "The decoder should pull ahead when the best answer is rare but its "
                "prefix steps are in the data, spread over different responses: the expectile V carries the value "
                "of the best continuation back to the shared prefix, so decoding with β(Q − V) can stitch pieces "
                "no single response contains and assign credit across tokens, while weighted cloning must fit a "
                "policy to a handful of capped-weight examples ("
            )
            + _cite("snell2022", "en")
            + ").",
        },
    },
    "ru": {
        "title": (
            "# Итоговая лабораторная модуля 5: одна среда, четыре способа учиться на фиксированных данных\n\n"
            "Циклы обучения уже написаны; они обучаются на **вашем** коде: десяти numpy-ядрах из ноутбука "
            "задания в этой папке (лабораторная читает его сохранённый файл: сохраняйте его после каждого "
            "изменения) и четырёх версиях на torch, которые вы напишете в разделе 5a. В этом курсе *ядро* — одна "
            "из этих функций; меню *Kernel* в Jupyter (Restart & Run All) — другое. Выполняйте ноутбук сверху "
            "вниз: раздел, которому нужен ещё не написанный код, печатает одну строку — что и где написать, — а "
            "остальное выполняется.\n\n"
            "{{points_table}}\n\n"
            "**Два прогона, и каждый назван.** *Ваш прогон* — один запуск короткого профиля smoke (для полного "
            "задайте `RL_LLM_M5_PROFILE=full` до запуска Jupyter): он проверяет, что ваш код обучается, и его "
            "числа шумные. *Прогон курса* — полный профиль, запусков: "
            "{{claim:dqn.dqn_success:n_seeds}}, он лежит в `m5_student/data`: на "
            "каждом графике и в каждой таблице сказано, какой из двух прогонов на них, а прогон курса всегда "
            "показан средним по запускам с 95 % интервалом. Вопросы — о прогоне курса; называйте разность "
            "методов настоящей, только если её парный интервал не содержит нуля."
        ),
        "environment": (
            "## 1. Среда и контракт перехода\n\nKeyDoorGrid: ключ открывает дверь, ловушки по-настоящему "
            "завершают эпизод (`terminated`), а лимит шагов лишь усекает его (`truncated`, бутстрэп "
            "продолжается). Одна и та же среда служит всем разделам, поэтому одни и те же маски "
            "бутстрэпа проверяются и в имитации, и в онлайн-DQN, и в офлайн-обучении."
        ),
        "dagger": (
            "## 2. Клонирование поведения, затем DAgger\n\nПервый ученик копирует несколько эпизодов эксперта. "
            "В каждом раунде DAgger текущий ученик действует сам, эксперт размечает состояния, до которых тот "
            "дошёл, они добавляются к данным, и ученик обучается заново. Больше меток эксперта помогает любому "
            "ученику, поэтому идею DAgger выделяет только сравнение **при равном числе меток**: клонирование, "
            "обученное на стольких же метках эксперта, сколько использовал DAgger, но только на состояниях "
            "эксперта. Оно идёт на сетке крупнее и с большим числом стартовых клеток, а второй рисунок измеряет "
            "сам сдвиг распределения: как часто каждый ученик посещает состояния, для которых у него нет метки, "
            "и как часто он там ошибается."
        ),
        "dqn": (
            "## 3. DQN и Double DQN\n\nБуфер воспроизведения, целевая сеть и epsilon-жадный сбор данных; цели "
            "считают ваши ядра. Из-за редкой награды буфер заранее заполняется зашумлёнными эпизодами эксперта (решение курса, "
            "а не часть обычного DQN)."
        ),
        "log": (
            "## 4. Сначала посмотрите на журнал\n\nЧастоты действий и исходы говорят больше, чем название метода. "
            "Этот журнал нарочно посредственный, как часто бывают журналы работающих систем: в большинстве "
            "эпизодов демонстратор забывает про ключ и идёт прямо к запертой двери, где и ждёт (или срывается в "
            "ловушку рядом с ней); меньшая часть эпизодов — эксперта, немного — случайных. Ваша "
            "`behavior_support_mask` отмечает действия, которые журнал поддерживает. Покрытие — это "
            "ограничение идентифицируемости: чего нет в журнале, того по нему не выучить никаким методом. Всё, "
            "что происходит в разделах 5 и 6, — разные ответы на вопрос, что делать там, где журнал молчит или "
            "где его самое частое поведение ошибочно."
        ),
        "ports": (
            "## 5a. Перенесите четыре функции потерь на torch\n\nОфлайн-алгоритмы обучаются обратным распространением "
            "через эти функции. Напишите каждую на операциях torch, чтобы работал autograd; проверка ниже сравнивает "
            "значения и градиенты с вашим numpy-ядром на случайных входах."
        ),
        "offline": (
            "## 5b. Один журнал, разные защиты от экстраполяции\n\nНаивный офлайн-DQN, ограничение действий, CQL "
            "и IQL обучаются на одном журнале с вашими ядрами и версиями на torch. Клонирование копирует самое "
            "частое действие каждого состояния, здесь — путь к запертой двери; метод, который учит ценности по "
            "наградам, может вместо этого предпочесть действия меньшинства, идущего за ключом. Защиты разные: "
            "ограничение не доверяет редким действиям, CQL снижает ценности всех действий относительно "
            "записанных, IQL вообще не оценивает действий, которых нет в журнале. Одинаковая отдача не делает "
            "методы одинаковыми (они могут прийти к одной политике по разным причинам), а один удачный запуск — "
            "не рейтинг методов: сравнивайте каждый метод с клонированием по его парному интервалу, а каждую "
            "отдачу — с отдачей эксперта (пунктир). Последний "
            "график показывает механизм: *выученное* Q каждого метода минус *истинное* Q его собственной "
            "политики, на действиях из журнала и на тех, которых журнал не содержит."
        ),
        "fqe": (
            "## 6. FQE тоже требует проверки\n\n"
            "Оценка Q-функции подгонкой (fitted Q evaluation, FQE) сохраняет беллмановское обновление, но заменяет "
            "максимум по следующим действиям средним по оцениваемой политике: задача улучшения превращается в "
            "задачу оценки. Оптимизм максимума при этом уходит, а ошибка аппроксимации и ошибка покрытия "
            "остаются: FQE — по-прежнему модель, подогнанная к журналу. На графике оценка каждой политики стоит "
            "рядом с её ценностью в симуляторе; разница между столбиками и есть ошибка FQE."
        ),
        "dt": (
            "## 7. Decision Transformer: запрошенная отдача — это условие\n\nОбучен с вашим `return_to_go` и вашей "
            "torch-NLL, затем получает запросы разной отдачи. Пунктирная диагональ (получено = запрошено) — "
            "ориентир, а не теорема: ничто в цели обучения не обещает, что модель выполнит запрос. Прежде чем "
            "читать результаты перебора запросов, посмотрите на распределение отдач в журнале: модель может "
            "воспроизвести только ту отдачу, которой действительно достигали какие-то эпизоды журнала."
        ),
        "language": (
            "## 8. Маленький ILQL-подобный конвейер по токенам\n\nПрефикс — состояние, следующий токен — "
            "действие, награда в конце ответа (1 за точную сумму, частичная — за верные начальные цифры). "
            "Один журнал, четыре метода:\n\n"
            "- **клонирование поведения** копирует разметчика (ваша маскированная NLL по токенам);\n"
            "- **клонирование с весами по отдаче** читает награды, но ценность не обучает: вес записанного "
            "ответа — exp(β(G − b)) с ограничением сверху (G — его отдача, b — средняя записанная отдача на тот "
            "же запрос);\n"
            "- **клонирование с весами преимущества** взвешивает по exp(β(Q − V)) от **ILQL-подобного критика** "
            "(Q на уровне токенов регрессируется на r + γ V(следующий префикс), V — верхний экспектиль медленной "
            "копии Q, к Q добавлен штраф CQL);\n"
            "- **ILQL-подобное декодирование** больше ничего не обучает: на каждом шаге выбирает токен с "
            "наибольшей суммой логарифма вероятности клонированной политики и β(Q − V) — это ILQL ("
        )
        + _cite("snell2022", "ru")
        + ") в упрощённом виде.\n\n"
        "Для каждого запроса самый вероятный ответ — устойчивая ошибка разметчика (верная сумма плюс один), "
        "поэтому клонирование проигрывает **по построению**; поучительно сравнение одних наград с двумя способами использовать "
        "критика. Шесть **отложенных запросов** — суммы, которых нет в журнале, — проверяют, выучил ли метод "
        "сложение или двенадцать ответов. Устройство то же, что у больших моделей, масштаб — игрушечный.",
        "takeaways": (
            "## 9. Выводы: где меняется статистический режим\n\n"
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
            "артефактами."
        ),
        "answer": "*Ваш ответ (проверяется вручную):*",
        "questions": {
            "dagger": (
                "**Вопрос.** Сравните в прогоне курса клонирование поведения и DAgger при "
                "одинаковом бюджете меток и при одинаковом числе различных меток (смотрите на напечатанные выше "
                "парные интервалы). По рисунку "
                "сдвига распределения объясните, откуда берутся неудачи клонирования. Что DAgger меняет в "
                "обучающих данных и что ему нужно такого, чего не требует простое клонирование?"
            ),
            "dqn": (
                "**Вопрос.** Успешнее ли Double DQN обычного DQN в прогоне курса и завышает ли он оценки меньше, "
                "как задуман? Смотрите на напечатанные выше парные интервалы. Что нужно, чтобы утверждать то или "
                "другое в общем случае, и что добавляет побочное исследование (задача, построенная ради разрыва)?"
            ),
            "offline": (
                "**Вопрос.** Самое частое поведение в журнале — идти к запертой двери без ключа. Какие методы "
                "в прогоне курса работают лучше клонирования поведения (смотрите на напечатанные выше парные "
                "интервалы, а не на высоту столбцов) и почему метод, читающий награды, может на этом журнале "
                "превзойти имитацию? Для наивного DQN, CQL и IQL воспользуйтесь графиком механизма (выученное "
                "минус истинное Q на действиях из журнала и на тех, которых в нём нет): что защищает каждый "
                "метод и каким образом?"
            ),
            "fqe": (
                "**Вопрос.** У какой политики в прогоне курса ошибка FQE наибольшая и позволяет ли напечатанный "
                "выше парный интервал поставить её выше ошибки IQL? Назовите механизм, из-за которого ошибка FQE "
                "бывает большой, и скажите, что должен был бы показать прогон, чтобы этот механизм объяснял порядок."
            ),
            "dt": (
                "**Вопрос.** Посмотрите на гистограмму отдач в журнале и на результаты перебора запросов. Какие "
                "запросы меняют полученную отдачу и что происходит с запросами, которые попадают между "
                "группами отдач журнала или выше лучшей из них?"
            ),
            "language": (
                "**Вопрос.** Как соотносятся четыре метода в прогоне курса на обучающих и на отложенных запросах "
                "(график и напечатанные выше числа)? Какой результат был предсказуем, если учесть, как построен "
                "журнал, что критик добавляет к взвешиванию по одним наградам и когда ILQL-подобное "
                "декодирование должно обгонять клонирование с весами преимущества?"
            ),
        },
        "answers": {
            "dagger": (
                "Клонирование обучается только на состояниях эксперта; ошибившись, ученик попадает в "
                "неразмеченные состояния, где его действия — догадки, и ошибки накапливаются: это сдвиг "
                "распределения, стоящий за границей O(εT²) ("
            )
            + _cite("ross2010", "ru")
            + "). DAgger запускает ученика, "
            "эксперт размечает состояния, до которых тот действительно дошёл, и ученик переобучается на "
            "объединённых данных, так что метки лежат на его собственном распределении состояний; для "
            "алгоритма без сожаления (no-regret) и когда одна ошибка увеличивает оставшуюся стоимость эксперта "
            "не больше чем на u (задача допускает исправление), стоимость растёт как uTε, линейно по горизонту "
            "(" + _cite("ross2011", "ru") + "). Число меток — отдельный рычаг, поэтому лабораторная "
            "сравнивает методы при равном бюджете, на сетке крупнее и с большим числом стартовых клеток, где "
            "несколько демонстраций покрывают узкую трубку из состояний, в которые может попасть ученик. В "
            "прогоне курса при бюджете {{claim:dagger.equal_budget_labels:mean:.0f}} меток клонирование "
            "достигает доли успехов {{claim:dagger.bc_equal_budget_success:mean_ci:.2f}}, а DAgger — "
            "{{claim:dagger.dagger_equal_budget_success:mean_ci:.2f}}; DAgger минус клонирование: "
            "{{compare:dagger.equal_budget}}. Равен здесь бюджет, а не метки: при одинаковом числе различных "
            "меток эксперта ({{claim:dagger.matched_labels:mean:.0f}} — всё, что есть в демонстрациях "
            "клонирования) DAgger минус клонирование равно {{compare:dagger.matched_distinct_labels}}; с "
            "демонстрациями, которые проскальзывают так же, как ученик (тогда они показывают исправление "
            "ошибок, и у клонирования {{claim:dagger.slipped_bc_labels:mean:.0f}} различных меток), — "
            "{{compare:dagger.slipped_demonstrations}}. Механизм виден на рисунке сдвига. В чистых демонстрациях "
            "{{claim:dagger.bc_equal_budget_labels:mean:.0f}} различных состояний (новые демонстрации их "
            "повторяют), и {{claim:dagger.bc_equal_budget_unseen_share:mean_ci:.2f}} собственных посещений "
            "клонирования приходятся на состояния вне их, против "
            "{{claim:dagger.dagger_equal_budget_unseen_share:mean_ci:.2f}} у DAgger (DAgger минус "
            "клонирование: {{compare:dagger.equal_budget_unseen_share}}). Действие клонирования неоптимально "
            "в {{claim:dagger.bc_equal_budget_error_seen:mean_ci:.2f}} посещений размеченных состояний и в "
            "{{claim:dagger.bc_equal_budget_error_unseen:mean_ci:.2f}} посещений остальных (разность: "
            "{{compare:dagger.bc_error_unseen_vs_seen}}): ему вредит то, куда он попадает, а не то, насколько "
            "хорошо он подогнан к своим данным. На кривой по раундам (малая сетка) ученики обучаются на разном "
            "числе меток ({{claim:dagger.bc_labels:mean:.0f}} против "
            "{{claim:dagger.dagger_labels:mean:.0f}}; разность {{compare:dagger.final_vs_round0}}), так что "
            "этот разрыв смешивает оба рычага. DAgger нужен эксперт, которого можно спрашивать о произвольных "
            "состояниях во время обучения; простому клонированию это не нужно.",
            "dqn": (
                "По {{claim:dqn.dqn_success:n_seeds}} запускам прогона курса доля успехов жадной политики — "
                "{{claim:dqn.dqn_success:mean_ci:.2f}} у DQN и {{claim:dqn.double_success:mean_ci:.2f}} у Double "
                "DQN; Double DQN минус DQN: {{compare:dqn.double_vs_dqn}}. Double DQN задуман, чтобы уменьшить "
                "смещение максимума вверх, и лабораторная измеряет его напрямую: Q жадного действия сети минус "
                "точная ценность этого действия, среднее по состояниям буфера, равно "
                "{{claim:dqn.dqn_overestimation_mean:mean_ci:.3f}} у DQN и "
                "{{claim:dqn.double_overestimation_mean:mean_ci:.3f}} у Double DQN за обучение (разность "
                "{{compare:dqn.double_vs_dqn_overestimation_mean}}), а в конце обучения разность равна "
                "{{compare:dqn.double_vs_dqn_overestimation_final}}. Разделение выбора и оценки уменьшает смещение "
                "вверх у максимума по шумным оценкам в среднем; оно не убирает его и может, наоборот, давать "
                "недооценку ("
            )
            + _cite("vanhasselt2010", "ru")
            + "). Если интервалы выше содержат ноль, этот прогон такого уменьшения не показывает; а на задаче, "
            "где жадное ранжирование и так верно, меньшее смещение может не изменить долю успехов. Для общего "
            "утверждения нужна разность, интервал которой не содержит нуля, одинаковый бюджет и не одна задача. "
            "Ваш собственный прогон — один короткий запуск и ничего не решает. Побочное исследование, напечатанное "
            "выше, — задача, построенная ради этого разрыва: состояние со многими действиями, награды которых "
            "шумные с отрицательным средним. Там DQN в начале обучения чаще уходит в плохую ветвь и сильнее "
            "завышает её ценность, чем Double DQN, и парные интервалы лежат выше нуля; к концу обучения разница "
            "в завышении уже не обнаруживается. Двойная оценка уменьшает смещение там, где его создают шум и много "
            "действий, а вместе с ним и то, как часто выбирается плохая ветвь.",
            "offline": (
                "Клонирование копирует самое частое действие каждого состояния, а на этом журнале это путь "
                "к запертой двери без ключа: его жадная политика даёт отдачу "
                "{{claim:offline.return.behavior_cloning:mean_ci:.2f}} при оптимуме "
                "{{claim:offline.return_optimal:mean:.2f}}. Меньшая часть эпизодов, идущих за ключом, получает "
                "больше, и метод, который учит ценности по наградам, может предпочесть их действия в тех "
                "состояниях, где два поведения расходятся. Каждый метод минус клонирование, парно по запускам курса: "
                "IQL {{compare:offline.vs_bc.iql}}; DQN с ограничением {{compare:offline.vs_bc.restricted_dqn}}; "
                "CQL {{compare:offline.vs_bc.cql}}; наивный DQN {{compare:offline.vs_bc.naive_dqn}}. Сказать "
                "«лучше» или «хуже» позволяет только интервал, не содержащий нуля; если ноль внутри, прогон не "
                "показывает отличия от клонирования. Почему так, видно на графике механизма. Цель наивного DQN "
                "берёт максимум по всем действиям, включая те, которых журнал в этом состоянии не содержит; их "
                "ценности никакая цель не исправляет, максимум выбирает наибольшую, а бутстрэп разносит её "
                "дальше. Выученное минус истинное Q равно {{compare:offline.unlogged_overestimation.naive_dqn}} на "
                "незаписанных действиях и {{claim:offline.q_logged_error.naive_dqn:mean_ci:.2f}} на парах из журнала, "
                "а наибольшее Q выше наибольшей возможной отдачи (1) в доле "
                "{{claim:offline.above_max_share.naive_dqn:mean:.2f}} состояний журнала: ошибки такого размера на парах "
                "обоих видов, когда ни одно истинное Q не больше 1, означают, что регрессия с бутстрэпом разошлась. "
                "Причину показывает контраст: DQN с ограничением на том же журнале, с целями только по записанным "
                "действиям, остаётся близок даже на ненаблюдавшихся действиях "
                "({{claim:offline.q_unlogged_error.restricted_dqn:mean_ci:.2f}}). IQL "
                "никогда не оценивает незаписанное действие: V — верхний экспектиль Q записанных действий, а "
                "политика перевзвешивает записанные действия множителем exp(β(Q − V)), поэтому там, где в журнале "
                "есть оба плана, она может предпочесть путь за ключом. DQN с ограничением берёт максимум только по "
                "действиям, которые выученная модель поведения считает достаточно частыми; действие эксперта там, "
                "где планы расходятся, эту проверку проходит, так что его тоже можно выбрать. CQL добавляет "
                "α(logsumexp_b Q(s, b) − Q(s, a)) для записанных пар — перекрёстную энтропию softmax по Q "
                "относительно записанного действия: член клонирования внутри критика, который тянет жадное действие "
                "к самому частому действию журнала, а здесь оно ошибочно. И уровень здесь не консервативен: "
                "выученная ценность жадного действия {{claim:offline.greedy_q_learned.cql:mean_ci:.2f}} при "
                "истинной {{claim:offline.greedy_value_true.cql:mean_ci:.2f}} ({{compare:offline.cql_level}}), "
                "а график механизма показывает, где сидит избыток: выученное минус истинное Q равно "
                "{{claim:offline.q_logged_error.cql:mean_ci:.2f}} на парах из журнала и "
                "{{claim:offline.q_unlogged_error.cql:mean_ci:.2f}} на незаписанных, то есть штраф поднял "
                "записанные действия, а не опустил остальные. "
                "Нижняя граница CQL ("
            )
            + _cite("kumar2020", "ru")
            + ") относится к ценности фиксированной политики, оцениваемой с достаточно большим весом, в среднем "
            "по состояниям данных, и её запас исчезает только там, где эта политика совпадает с политикой сбора "
            "данных; доказана она для точного и линейного классов функций. Лабораторная измеряет другую величину "
            "(выученное Q собственного жадного действия CQL против истинной ценности этой политики), да ещё с "
            "нейронной сетью: это нужно проверять, как здесь. Исследование α, напечатанное выше (на своих свежих "
            "запусках), показывает, где находится CQL: при малом α он ведёт себя как наивный DQN, при большом его "
            "жадная политика следует клонированию, и ни одно α сетки не впереди клонирования по отдаче на этом "
            "журнале: штраф не читает наград. Какой метод выигрывает, зависит и от самого журнала: "
            "на втором журнале, буфере воспроизведения онлайн-DQN (в основном поздняя, хорошая игра агента), "
            "клонирование даёт {{claim:offline.replay_return.behavior_cloning:mean_ci:.2f}}, а IQL минус "
            "клонирование — {{compare:offline.replay_vs_bc.iql}}.",
            "fqe": (
                "В прогоне курса средняя ошибка наивного DQN равна "
                "{{claim:fqe.abs_error.naive_dqn:mean_ci:.2f}}, у IQL — "
                "{{claim:fqe.abs_error.iql:mean_ci:.2f}}; парная разность равна "
                "{{compare:fqe.naive_vs_iql_error}}: прогон не упорядочивает эти две политики. Механизм, из-за "
                "которого ошибка FQE бывает большой, — покрытие: FQE бутстрэппится от собственных оценок в "
                "действиях, которые выбирает оцениваемая политика, и там, где таких действий в журнале мало, ни "
                "одна цель их не исправляет. Жадная политика наивного DQN выбирает такие действия, политика IQL — "
                "только записанные, поэтому покрытие предсказывает большую ошибку у наивного DQN; чтобы сказать, что "
                "оно объясняет порядок, прогон должен был бы показать разность, интервал которой не содержит нуля "
                "(больше запусков или ошибки по состояниям в зависимости от покрытия). В коротком прогоне smoke "
                "ошибки отражают ещё и недоученную модель и маленький журнал. В любом случае FQE — обученная "
                "модель, и её нужно проверять так же, как оцениваемые ею политики."
            ),
            "dt": (
                "Эпизоды журнала образуют три группы — по тому, чем они закончились (гистограмма раскрашивает их): "
                "эпизоды, закончившиеся в ловушке (сильно отрицательная отдача), немногие эпизоды, усечённые "
                "лимитом шагов (только плата за шаги, поэтому у всех одна и та же отрицательная отдача), и эпизоды, "
                "дошедшие до цели (положительная отдача меньше единицы). Между группами эпизодов нет вовсе. Запросы "
                "внутри группы ловушек воспроизводят неудачное поведение. Между группами средняя отдача от запроса "
                "зависит, но среднее здесь — не эпизод, получивший такую отдачу: оно усредняет неудачные и успешные "
                "эпизоды, и запрос в основном меняет их соотношение. В зафиксированном прогоне кривая даёт "
                "{{claim:dt.achieved.0.25:mean:.2f}} для запроса между группами, "
                "{{claim:dt.achieved.0.75:mean:.2f}} для запроса внутри группы успешных эпизодов и "
                "{{claim:dt.achieved.2.00:mean:.2f}} для самого высокого запроса, намного выше всего, что есть в "
                "журнале. Даёт ли что-нибудь запрос сверх того, что есть в журнале, решает парное сравнение, а не "
                "две точки на графике: самый высокий запрос минус запрос внутри группы успешных эпизодов — "
                "{{compare:dt.saturation}}. Так или иначе, плавного роста вдоль диагонали нет: отдач между группами "
                "модель не видела, сшить эпизод лучше тех, что есть в журнале, не может, а запрос для неё — вход, "
                "а не гарантия ("
            )
            + _cite("brandfonbrener2022", "ru")
            + ").",
            "language": (
                "Клонирование проигрывает по построению: самый вероятный ответ разметчика — ошибка, и "
                "клонирование её копирует (доля точных ответов "
                "{{claim:language.exact_match.behavior_cloning:mean_ci:.2f}} в прогоне курса; ILQL-подобное "
                "декодирование минус клонирование: {{compare:language.ilql_vs_bc}}). Абляция показывает, откуда "
                "этот выигрыш. Одни награды, без выученной ценности: клонирование с весами по отдаче минус "
                "клонирование — {{compare:language.rwbc_vs_bc}}. Что критик добавляет к весам: клонирование с "
                "весами преимущества минус клонирование с весами по отдаче — {{compare:language.awbc_vs_rwbc}}; "
                "что его головы ценности добавляют при декодировании: ILQL-подобное декодирование минус "
                "клонирование с весами по отдаче — {{compare:language.ilql_vs_rwbc}}, минус клонирование с "
                "весами преимущества — {{compare:language.ilql_vs_awbc}}. Там, где интервал не обнаруживает "
                "различия, этот прогон не показывает обучения ценностей на уровне токенов сверх взвешивания по "
                "награде: точный ответ для каждого запроса целиком встречается в журнале, так что достаточно "
                "переранжировать записанные ответы по их награде. Что выучено, показывают отложенные запросы: "
                "доля точных ответов на них — {{claim:language.heldout_exact_match.ilql_like:mean_ci:.2f}} у "
                "ILQL-подобного декодирования и "
                "{{claim:language.heldout_exact_match.return_weighted_bc:mean_ci:.2f}} у клонирования с весами "
                "по отдаче (отложенные минус обучающие запросы: {{compare:language.heldout_vs_train.ilql_like}}; "
                "декодирование минус клонирование на них: {{compare:language.heldout.ilql_vs_bc}}). Если эти "
                "числа близки к нулю, как и следует ожидать при двенадцати обучающих запросах, методы выучили "
                "двенадцать ответов, а не сложение, и ничто здесь не говорит, что какой-либо из них обобщает. "
                "Декодирование должно вырваться вперёд, когда лучший ответ редок, но его начальные шаги "
                "есть в данных, разбросанные по разным ответам: экспектиль V переносит ценность лучшего "
                "продолжения на общий префикс, поэтому декодирование с β(Q − V) может сшить куски, которых нет ни "
                "в одном ответе целиком, и распределить вклад по токенам, тогда как взвешенному клонированию "
                "приходится подгонять политику под горстку примеров с ограниченными весами "
                "("
            )
            + _cite("snell2022", "ru")
            + ").",
        },
    },
}
