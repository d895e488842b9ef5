"""The text of the CQL penalty-weight study's report (``reference_impl.cql_sweep``), in English and Russian.

Each language is a block of ``@key text`` entries: continuation lines are joined with a space and
``¶`` is a paragraph break (``cql_sweep._parse_text``); ``{name}`` fields are filled from the run's JSON.
"""

TEXT_SOURCE = {
    "en": """
@title # CQL's penalty weight α on the offline log (generated)
@generated Written by `python -m reference_impl.cql_sweep --out docs/lab-results` from `cql_alpha.json`, which holds every number below; do
not edit by hand.
@what ## What was run¶Conservative Q-learning (CQL) here is the lab's discrete CQL: naive DQN's TD loss plus α times the penalty logsumexp_b
Q(s, b) − Q(s, a_logged). For each α in {alphas} and each report seed, CQL is trained as the lab's offline section trains it (profile
`{profile}`: the section's log of {episodes} episodes built from the seed, {epochs} epochs, {config}); cloning and naive DQN are trained on
the same logs (training seeds as in the section: cloning 100·seed, naive DQN 100·seed + 1, CQL 100·seed + 3). All measures are exact, from
KeyDoorGrid's tabular model: return and success over one rollout per start cell (starts are uniform; 50-step limit); the true Q is Q^π of
the learner's own greedy policy (γ = {gamma}); Q errors and shares are over the log's distinct states.
@log **The log, as it is.** Not a learning agent's replay buffer: a fixed mixture of fixed demonstrators. Each episode is played by the
optimal planner ({w_expert} of episodes), by a planner that walks to the closed door without fetching the key and pushes against it until
the time limit ({w_forget}), or by uniformly random actions ({w_random}); both planners also take a random action with probability {eps}.
Over the report seeds a log holds {transitions} transitions and {states} distinct states; its episodes return {log_return} and a share
{log_goal} of them reach the goal. Noise-free, over the start cells, the key-forgetting planner returns {fk_return} (success {fk_success}),
the expert {ex_return} (success {ex_success}).
@seeds ## Seeds and the settings search¶The lab's report uses seed offsets {lab} (seeds {lab_seeds}). The α grid was chosen on
*design* offsets {design} (seeds {design_seeds}); every number in the tables comes from the fresh *report* offsets {report} (seeds
{report_seeds}), not looked at while choosing anything. One search was made: α over {design_grid} on the design seeds, with a rule fixed in
code before looking (`choose_report_alphas`): report α up to the first value whose greedy policy agrees with cloning's on at least {target}
of the log's states (mean over the design seeds), and at least up to α = {min_top}. Design means of that agreement: {design_agreement}.
Reported grid: {chosen}. Log size, epochs, network and every other setting are the lab's and were not searched.
@intervals Intervals are 95 % intervals over the {n} report seeds: *one-sample t* for the mean return and Q errors; *percentile bootstrap*
({resamples} resamples of the seeds) for success and the shares, which keeps them inside [0, 1] but tends to be narrow with {n} seeds;
*paired t* for differences (same seed, log and start cells), worded by `stats.verdict`: ahead or behind only when the interval excludes
zero, else no detectable difference.
@table ## The sweep (report seeds)¶![CQL against α](cql_alpha.png)¶| method | return | success | Q − Q^π, logged pairs | Q − Q^π, unlogged
pairs | greedy action logged | agrees with cloning |
@names naive DQN (lab's seed) | behavior cloning | none | in the group with no detectable difference from naive DQN | in the group with no
detectable difference from cloning | in neither group
@cmp ## CQL against its two ends (paired over the report seeds)¶| α | return − (α = 0) | success − (α = 0) | return − cloning | success −
cloning |
@where ## Where CQL sits between naive DQN and cloning¶From α = 0 to α = {top}, the share of the log's states where CQL's greedy action is
cloning's goes from {agree0} to {agree_top}, and the share where the log holds it from {logged0} to {logged_top}. No detectable difference
from α = 0 in return and in success: {naive_like}. No detectable difference from cloning in both: {bc_like}. Ahead of cloning in return:
{ahead_bc}; behind: {behind_bc}. The highest mean return is at α = {best}: {best_return} (minus cloning {best_vs_bc}; minus α = 0
{best_vs_0}). At α = 0 CQL's objective is naive DQN's; the lab's naive DQN (its own initialization seed) minus CQL at α = 0: return {ret}.
@meaning_pos On this log some penalty weight in the grid is ahead of cloning in return: α = {ahead_bc}. The lab's own setting, α =
{lab_alpha}, is {lab_like}. Cloning returns {bc_return} (success {bc_success}); the key-forgetting planner alone {fk_return}, the expert
{ex_return}.
@meaning_neg On this log no penalty weight in the grid is ahead of cloning in return. CQL is ahead of naive DQN (α = 0) in return at α =
{ahead_0} (share of the log's states where its greedy action is cloning's, {agree_ahead}); at α = {last_naive} its greedy action is a logged
one in {logged_last_naive} of the states, yet its return, {ret_last_naive}, is naive DQN's. The lab's own setting, α = {lab_alpha}, is
{lab_like}. The log says why: it is a fixed mixture in which the key-forgetting planner leads most episodes, so in key-less states most
logged actions are that planner's mistake, and staying on logged actions is no protection. Cloning, which follows the most frequent logged
action, ends much nearer that planner than the expert ({bc_return}, success {bc_success}; the planner alone {fk_return}, the expert
{ex_return}), and the penalty, which never reads a reward, pulls CQL towards cloning. Only the TD part could tell the expert's logged
actions from the planner's, and at no α of the grid does CQL end up ahead of cloning.
@q ## What the penalty does to Q¶For α below {bounded}, on at least one seed the learned Q runs away as naive DQN's does: an error beyond
{qmax} = 2 max |r| / (1 − γ), so the learned Q lies outside any value a policy can have here (see the table). From α = {bounded} on it stays
bounded on every seed: learned minus true Q on logged pairs is {logged_b} at α = {bounded} and peaks at {logged_peak} (α = {peak}); on
unlogged pairs it is {unlogged_b} and {unlogged_peak} at the same α, and no difference from zero is detectable there at α = {unlogged_zero}.
At a state s, the penalty's gradient in Q(s, b), summed over the log's rows at s, is α n(s) (μ(b|s) − π̂_β(b|s)), with μ = softmax Q(s, ·)
and π̂_β the log's action frequencies: it pushes down what the softmax picks more often than the log (every unlogged action) and pushes *up*
the actions the behavior policy takes more often than the softmax does. At the tabular stationary point a logged action has Q(s, a) = ȳ(s,
a) + α (1 − μ(a|s) / π̂_β(a|s)) (ȳ its mean TD target): above its target wherever π̂_β > μ, a surplus the max in the next target carries
backwards (up to α / (1 − γ)). Adding a constant to all of Q(s, ·) leaves the penalty unchanged: it sets gaps between actions, not their
level. That is the lab's split on its own seeds (claims `offline.q_logged_error.cql`, `offline.q_unlogged_error.cql`, α = 1): a large error
on logged pairs and none detectable on unlogged ones is what the log-sum-exp penalty does to actions the behavior policy takes more often
than the softmax does.
@thm ## Kumar et al. (2020), Theorem 3.2, and what the lab measures¶**The theorem** is about *policy evaluation*: a fixed policy π, the
penalty α (E_{{s∼D, a∼μ}} Q(s, a) − E_{{s∼D, a∼π̂_β}} Q(s, a)) with μ = π, tabular Q at the fixed point of the iteration. The value of π
under the learned Q, V̂^π(s) = E_{{a∼π}} Q̂^π(s, a), lower-bounds the true value V^π(s), in expectation over the data's state distribution,
once α is large enough to outweigh the sampling error of the empirical Bellman operator (any α > 0 when it is exact). The margin is α (I − γ
P^π)^{{−1}} applied to E_{{a∼π}}[π(a|s) / π̂_β(a|s) − 1], which vanishes only where π equals the behavior policy; for a deterministic π it
is 1 / π̂_β(π(s)|s) − 1, positive wherever the log holds another action at s too, *even when π plays a logged action*. The bound is on the
π-expectation of Q̂, not on each Q̂(s, a). (So the margin does not vanish merely because the policy picks actions the log holds.)
On the report seeds at α = {alpha_ref}, CQL's greedy action is logged in a share {logged_ref} of the log's states, but the gap term is zero
(the log holds only that action) in {gap0_ref}.
@lab_q **What the lab measures** (claim `offline.cql_level`; "greedy gap" here): the mean over the log's rows (the data's state
distribution) of Q̂(s, π(s)) − V^π(s), π = argmax Q̂, V^π exact. Its form is the theorem's, its object is not: Q̂ is trained with the max
over all actions in the target (Q-learning: π moves with Q̂), with μ = softmax Q̂ (log-sum-exp, CQL(H)) while π = argmax Q̂ ≠ μ, by a neural
network stopped after a fixed number of epochs. Theorem 3.2's conditions (fixed π, μ = π, tabular fixed point) do not hold, so it predicts
nothing about this number's sign. On the report seeds it is {gap0} at α = 0, {gap_ref} at α = {alpha_ref} and {gap_top} at α = {top}
(one-sample t).
@weak ## Limits¶{n} report seeds, {n_design} design seeds and one log size. The top of the grid follows from an agreement threshold
({target}) chosen for this sweep; larger α were looked at on the design seeds only. A run's success takes only the values k / {starts} (one
rollout per start cell). Agreement is with cloning at its own seed, itself noisy. The Q errors below α = {bounded} are dominated by runaway
seeds; their intervals say little.
@fig CQL's penalty weight α on the offline log ({n} report seeds, 95 % bands) | penalty weight α (0 shown apart) | return (exact) | success
(exact) | learned − true Q | share of the log's states | logged pairs | unlogged pairs | greedy action logged | agrees with cloning | expert
(noise-free)
""",
    "ru": """
@title # Вес штрафа CQL α на офлайн-журнале (сгенерировано)
@generated Записано командой `python -m reference_impl.cql_sweep --out docs/lab-results` из `cql_alpha.json`, где лежит каждое число ниже;
не редактируйте вручную.
@what ## Что запускалось¶Консервативное Q-обучение (CQL) здесь — дискретный CQL лабораторной: TD-потеря наивного DQN плюс α, умноженное на
штраф CQL logsumexp_b Q(s, b) − Q(s, a_из_журнала). Для каждого α из {alphas} и каждого отчётного запуска CQL обучается так же, как в
офлайн-разделе лабораторной (профиль `{profile}`: журнал раздела из {episodes} эпизодов на запуск, {epochs} эпох, {config});
клонирование и наивный DQN обучаются на тех же журналах (инициализация — как в разделе: клонирование 100·seed, наивный DQN 100·seed + 1,
CQL 100·seed + 3). Все меры точные, по табличной модели KeyDoorGrid: отдача и доля успехов — по одному эпизоду из каждой стартовой клетки
(старты равновероятны; лимит 50 шагов); истинное Q — это Q^π собственной жадной политики метода (γ = {gamma}); ошибки Q и доли — по
различным состояниям журнала.
@log **Журнал как он есть.** Это не буфер воспроизведения обучающегося агента, а фиксированная смесь фиксированных демонстраторов. Каждый
эпизод играет оптимальный планировщик (доля эпизодов {w_expert}), планировщик, который идёт к закрытой двери, не взяв ключ, и упирается в
неё до лимита шагов ({w_forget}), или равновероятно случайные действия ({w_random}); оба планировщика к тому же с вероятностью {eps} делают
случайный ход. По отчётным запускам в журнале {transitions} переходов и {states} различных состояний; средняя отдача эпизодов {log_return},
до цели доходит доля {log_goal}. Без шума, по стартовым клеткам, планировщик, забывающий ключ, получает {fk_return} (успех {fk_success}),
эксперт — {ex_return} (успех {ex_success}).
@seeds ## Запуски и поиск настроек¶Отчёт лабораторной использует запуски со сдвигами {lab} (номера {lab_seeds}). Сетка α выбиралась
на *проектных* запусках со сдвигами {design} (номера {design_seeds}); все числа в таблицах — со свежих *отчётных* запусков со сдвигами
{report} (номера {report_seeds}), на которые при выборе не смотрели. Поиск был один: α по сетке {design_grid} на проектных запусках, с
правилом, записанным в коде до просмотра (`choose_report_alphas`): в отчёт идут α до первого значения, при котором жадная политика совпадает
с клонированием хотя бы в доле {target} состояний журнала (среднее по проектным запускам), и не меньше чем до α = {min_top}. Средние этого
совпадения на проектных запусках: {design_agreement}. Сетка отчёта: {chosen}. Размер журнала, эпохи, сеть и прочие настройки — как в
лабораторной, их не подбирали.
@intervals Интервалы — 95 % доверительные интервалы по {n} отчётным запускам: *одновыборочный t-интервал* для средней отдачи и ошибок Q;
*процентильный бутстреп* ({resamples} перевыборок запусков) для доли успехов и прочих долей — он не выходит за [0, 1], но при {n} запусках
бывает узковат; *парный t-интервал* для разностей (тот же запуск, журнал и стартовые клетки) со словами `stats.verdict`: «впереди» или
«позади» — только если интервал не содержит нуля, иначе «различие не обнаружено».
@table ## Результаты (отчётные запуски)¶![CQL в зависимости от α](cql_alpha.ru.png)¶| метод | отдача | доля успехов | Q − Q^π, пары из
журнала | Q − Q^π, пары вне журнала | жадное действие в журнале | как у клонирования |
@names наивный DQN (инициализация лабораторной) | клонирование поведения | нет | в группе, где различие с наивным DQN не обнаружено | в
группе, где различие с клонированием не обнаружено | ни в одной из групп
@cmp ## CQL против двух крайних случаев (парно по отчётным запускам)¶| α | отдача − (α = 0) | успех − (α = 0) | отдача − клонирование |
успех − клонирование |
@where ## Где CQL между наивным DQN и клонированием¶От α = 0 до α = {top} доля состояний журнала, где жадное действие CQL совпадает с
действием клонирования, меняется с {agree0} до {agree_top}, а доля, где это действие есть в журнале, — с {logged0} до {logged_top}. Различие
с α = 0 не обнаружено ни по отдаче, ни по успеху: {naive_like}. Различие с клонированием не обнаружено ни по отдаче, ни по успеху:
{bc_like}. Впереди клонирования по отдаче: {ahead_bc}; позади: {behind_bc}. Наибольшая средняя отдача — при α = {best}: {best_return} (минус
клонирование {best_vs_bc}; минус α = 0 {best_vs_0}). При α = 0 целевая функция CQL — та же, что у наивного DQN; наивный DQN лабораторной (со
своей инициализацией) минус CQL при α = 0: отдача {ret}.
@meaning_pos На этом журнале в сетке есть вес штрафа, при котором CQL впереди клонирования по отдаче: α = {ahead_bc}. Настройка самой
лабораторной, α = {lab_alpha}, — {lab_like}. Клонирование получает {bc_return} (успех {bc_success}); планировщик, забывающий ключ, сам по
себе — {fk_return}, эксперт — {ex_return}.
@meaning_neg На этом журнале ни один вес штрафа из сетки не впереди клонирования по отдаче. CQL впереди наивного DQN (α = 0) по отдаче при α
= {ahead_0} (доля состояний журнала, где его жадное действие совпадает с действием клонирования: {agree_ahead}); при α = {last_naive} его
жадное действие есть в журнале в доле {logged_last_naive} состояний, а отдача, {ret_last_naive}, — как у наивного DQN. Настройка самой
лабораторной, α = {lab_alpha}, — {lab_like}. Причина — в журнале: это фиксированная смесь, где большинство эпизодов ведёт планировщик,
забывающий ключ, поэтому в состояниях без ключа большинство записанных действий — его ошибка, и держаться действий из журнала — не защита.
Клонирование, которое следует самому частому действию журнала, оказывается гораздо ближе к этому планировщику, чем к эксперту ({bc_return},
успех {bc_success}; сам планировщик — {fk_return}, эксперт — {ex_return}), а штраф, который не читает наград, тянет CQL к клонированию.
Отличить записанные действия эксперта от действий планировщика могла бы только TD-часть, и ни при каком α из сетки CQL не оказывается
впереди клонирования.
@q ## Что штраф делает с Q¶При α меньше {bounded} хотя бы в одном запуске выученное Q уходит вразнос, как у наивного DQN: ошибка больше
{qmax} = 2 max |r| / (1 − γ), то есть выученное Q вне любых ценностей, какие бывают у политик этой задачи (см. таблицу). Начиная с α =
{bounded} оно ограничено во всех запусках: выученное минус истинное Q на парах из журнала равно {logged_b} при α = {bounded} и достигает
максимума {logged_peak} (α = {peak}); на парах вне журнала — {unlogged_b} и {unlogged_peak} при тех же α, и отличие от нуля там не
обнаружено при α = {unlogged_zero}. В состоянии s градиент штрафа по Q(s, b), просуммированный по строкам журнала в s, равен α n(s) (μ(b|s)
− π̂_β(b|s)), где μ = softmax Q(s, ·), а π̂_β — частоты действий в журнале: штраф опускает то, что softmax выбирает чаще журнала (все
действия вне журнала), и *поднимает* действия, которые поведенческая политика делает чаще, чем softmax. В табличной стационарной точке у
записанного действия Q(s, a) = ȳ(s, a) + α (1 − μ(a|s) / π̂_β(a|s)) (ȳ — средняя TD-цель): выше цели везде, где π̂_β > μ, и максимум в
следующей цели переносит этот избыток назад (до α / (1 − γ)). Если прибавить ко всем Q(s, ·) константу, штраф не изменится: он задаёт
разрывы между действиями, а не их уровень. Это и есть расщепление, которое лабораторная получила на своих запусках (утверждения
`offline.q_logged_error.cql`, `offline.q_unlogged_error.cql`, α = 1): большая ошибка на парах из журнала и необнаружимая вне его — то, что
штраф log-sum-exp делает с действиями, которые поведенческая политика выбирает чаще, чем softmax.
@thm ## Kumar et al. (2020), теорема 3.2, и что измеряет лабораторная¶**Теорема** — об *оценивании политики*: фиксированная политика π,
штраф α (E_{{s∼D, a∼μ}} Q(s, a) − E_{{s∼D, a∼π̂_β}} Q(s, a)) при μ = π, табличное Q в неподвижной точке итерации. Ценность π по выученному
Q, V̂^π(s) = E_{{a∼π}} Q̂^π(s, a), — нижняя оценка истинной ценности V^π(s) в среднем по распределению состояний данных, если α достаточно
велико, чтобы перевесить ошибку выборки эмпирического оператора Беллмана (при точном операторе — любое α > 0). Запас равен α (I − γ
P^π)^{{−1}}, применённому к E_{{a∼π}}[π(a|s) / π̂_β(a|s) − 1], и исчезает только там, где π совпадает с поведенческой политикой; для
детерминированной π это 1 / π̂_β(π(s)|s) − 1 — положительно везде, где журнал содержит в s и другое действие, *даже если π выбирает действие
из журнала*. Оценка снизу — на π-среднее Q̂, а не на каждое Q̂(s, a). (Поэтому запас не исчезает только оттого, что политика выбирает
действия из журнала.) На отчётных запусках при α = {alpha_ref} жадное действие CQL есть в журнале в доле {logged_ref} состояний, а член
запаса равен нулю (в журнале только это действие) в доле {gap0_ref}.
@lab_q **Что измеряет лабораторная** (утверждение `offline.cql_level`; здесь — «разрыв жадного действия»): среднее по строкам журнала
(распределению состояний данных) от Q̂(s, π(s)) − V^π(s), где π = argmax Q̂, а V^π точное. По форме это величина теоремы, по объекту — нет:
Q̂ обучено с максимумом по всем действиям в цели (Q-обучение: π меняется вместе с Q̂), с μ = softmax Q̂ (log-sum-exp, CQL(H)), тогда как π =
argmax Q̂ ≠ μ, нейросетью, остановленной через фиксированное число эпох. Условия теоремы 3.2 (фиксированная π, μ = π, табличная неподвижная
точка) не выполнены, и о знаке этого числа она ничего не говорит. На отчётных запусках оно равно {gap0} при α = 0, {gap_ref} при α =
{alpha_ref} и {gap_top} при α = {top} (одновыборочный t-интервал).
@weak ## Ограничения¶Отчётных запусков: {n}, проектных: {n_design}, размер журнала один. Верх сетки определяется порогом совпадения
({target}), выбранным для этого прогона; бо́льшие α смотрели только на проектных запусках. Доля успехов одного запуска принимает только
значения k / {starts} (один эпизод из каждой стартовой клетки). Совпадение — с клонированием при его собственной инициализации, которая сама
шумит. Ошибки Q при α меньше {bounded} определяются запусками, ушедшими вразнос; их интервалы мало что говорят.
@fig Вес штрафа CQL α на офлайн-журнале ({n} отчётных запусков, 95 % интервалы) | вес штрафа α (0 — отдельно) | отдача (точно) | доля
успехов (точно) | выученное − истинное Q | доля состояний журнала | пары из журнала | пары вне журнала | жадное действие в журнале |
совпадает с клонированием | эксперт (без шума)
""",
}
