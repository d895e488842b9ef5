// The marking page of `m5 review GRADEBOOK --serve` (served by autograder/marking/server.py).
//
// Rules this file keeps: every text from the server (student answers, comments, names, rubric
// wording) reaches the DOM through textContent (el() below) and never through innerHTML or an
// attribute a browser acts on (href, src, on*); the token is read from the page's own URL and sent
// in a header with every call; the marker's name is kept in sessionStorage (one tab, one marker).
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const LANG = document.documentElement.lang === "ru" ? "ru" : "en";
const NAME_KEY = "m5-marker";

const state = {
  labels: null,
  marker: sessionStorage.getItem(NAME_KEY) || "",
  questions: [],
  names: false,
  current: null, // the question shown (the server's answer to /api/question)
  selected: null, // the key of the selected unit: "g:<representative ref>" or "a:<ref>"
  expanded: new Set(), // representative refs of the groups shown open
  drafts: new Map(), // comment drafts by unit key: kept across reloads, so a conflict loses nothing
  editing: null, // the rubric item id whose edit form is open, "new" for the add form
  busy: false,
};

// ------------------------------------------------------------------ helpers
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "class") node.className = value;
    else if (key === "on") for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    else if (key === "value") node.value = value;
    else node.setAttribute(key, value); // only names written in this file, never a data-driven one
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function t(key, values) {
  const table = state.labels ? state.labels[LANG] : {};
  let text = table[key] !== undefined ? table[key] : key;
  for (const [name, value] of Object.entries(values || {})) text = text.split("{" + name + "}").join(String(value));
  return text;
}

function number(value) {
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 100) / 100);
}

function studentLabel(answer) {
  return answer.name !== undefined ? answer.name : t("student", { n: answer.number });
}

function say(text, kind) {
  const status = document.getElementById("status");
  if (!status) return;
  status.textContent = text;
  status.className = kind || "";
}

async function call(path, body) {
  const headers = { "X-M5-Token": TOKEN, "X-M5-Lang": LANG };
  if (state.marker) headers["X-M5-Marker"] = encodeURIComponent(state.marker);
  const init = { method: "GET", headers, cache: "no-store", credentials: "omit", redirect: "error" };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data;
  try {
    data = await response.json();
  } catch (_) {
    data = { error: response.statusText || String(response.status) };
  }
  if (!response.ok) {
    const error = new Error(typeof data.error === "string" ? data.error : String(response.status));
    error.status = response.status;
    throw error;
  }
  return data;
}

// An action: run it, then reload the question; a conflict reloads too and says so (drafts stay).
async function act(path, body, done) {
  if (state.busy) return;
  setBusy(true);
  try {
    const answer = await call(path, body);
    say(done ? done(answer) : t("saved"), "ok");
    return answer;
  } catch (error) {
    if (error.status === 409) say(t("conflict", { error: error.message }), "conflict");
    else say(t("refused", { error: error.message }), "error");
    return null;
  } finally {
    await reload();
    setBusy(false);
  }
}

// aria-busy on the body while an action or a load runs: assistive tools (and the tests) wait for it.
function setBusy(flag) {
  state.busy = flag;
  document.body.setAttribute("aria-busy", flag ? "true" : "false");
}

// ------------------------------------------------------------------ loading
async function start() {
  setBusy(true);
  try {
    state.labels = (await call("/api/labels")).labels;
  } catch (error) {
    document.getElementById("app").replaceChildren(el("p", { role: "alert" }, "m5: " + error.message));
    setBusy(false);
    return;
  }
  document.title = t("title");
  document.addEventListener("keydown", onKey);
  setBusy(false);
  if (!state.marker) return renderNameForm();
  await loadState();
}

async function loadState() {
  try {
    const data = await call("/api/state");
    state.questions = data.questions;
    state.names = data.names;
  } catch (error) {
    renderFrame();
    say(t("refused", { error: error.message }), "error");
    return;
  }
  renderFrame();
  const wanted = new URLSearchParams(location.hash.slice(1)).get("q");
  const first = state.questions.find((q) => q.id === wanted) || state.questions[0];
  if (first) await openQuestion(first.id);
}

async function openQuestion(id) {
  if (state.busy) return;
  setBusy(true);
  try {
    const [data, question] = await Promise.all([call("/api/state"), call("/api/question?id=" + encodeURIComponent(id))]);
    state.questions = data.questions;
    state.current = question;
  } catch (error) {
    say(t("refused", { error: error.message }), "error");
    return;
  } finally {
    setBusy(false);
  }
  state.editing = null;
  history.replaceState(null, "", location.pathname + location.search + "#q=" + encodeURIComponent(id));
  const units = unitKeys();
  if (!units.includes(state.selected)) state.selected = units[0] || null;
  renderNav();
  renderQuestion();
}

async function reload() {
  if (!state.current) return;
  try {
    const [data, question] = await Promise.all([call("/api/state"), call("/api/question?id=" + encodeURIComponent(state.current.id))]);
    state.questions = data.questions;
    state.current = question;
  } catch (error) {
    say(t("refused", { error: error.message }), "error");
    return;
  }
  const units = unitKeys();
  if (!units.includes(state.selected)) state.selected = units[0] || null;
  renderNav();
  renderQuestion();
}

// ------------------------------------------------------------------ the frame
function renderNameForm() {
  const input = el("input", { id: "marker-name", type: "text", maxlength: "80", required: "", autocomplete: "name" });
  const form = el(
    "form",
    { class: "inline card", id: "name-form", on: { submit: onName } },
    el("label", { for: "marker-name" }, t("name_prompt")),
    input,
    el("button", { type: "submit" }, t("name_button")),
  );
  document.getElementById("app").replaceChildren(el("h1", {}, t("title")), form);
  input.focus();

  async function onName(event) {
    event.preventDefault();
    const name = input.value.trim();
    if (!name) return;
    state.marker = name;
    sessionStorage.setItem(NAME_KEY, name);
    await loadState();
  }
}

function renderFrame() {
  const other = LANG === "en" ? "ru" : "en";
  const params = new URLSearchParams(location.search);
  params.set("lang", other);
  const header = el(
    "header",
    {},
    el("h1", {}, t("title")),
    el("span", { id: "marker" }, t("marking_as", { name: state.marker })),
    el("button", { type: "button", id: "change-name", on: { click: changeName } }, t("change_name")),
    el("button", { type: "button", id: "export", on: { click: exportMarks } }, t("export")),
    el("button", { type: "button", id: "language", on: { click: () => location.assign("?" + params.toString() + location.hash) } }, t("other_language")),
    el("p", { id: "status", role: "status", "aria-live": "polite" }),
  );
  const layout = el("div", { class: "layout" }, el("nav", { id: "questions", "aria-label": t("questions") }), el("div", { id: "question" }));
  const help = el("p", { class: "help muted", id: "help" }, t("keys"));
  document.getElementById("app").replaceChildren(header, layout, help);
}

function changeName() {
  sessionStorage.removeItem(NAME_KEY);
  state.marker = "";
  state.current = null;
  renderNameForm();
}

async function exportMarks() {
  await act("/api/export", {}, (answer) => t("exported", { files: answer.files.join(", ") }));
}

function renderNav() {
  const nav = document.getElementById("questions");
  if (!nav) return;
  const list = el("ol", {});
  for (const q of state.questions) {
    const current = state.current && state.current.id === q.id;
    list.append(
      el(
        "li",
        {},
        el(
          "button",
          { type: "button", class: "question-link", "aria-current": current ? "true" : "false", on: { click: () => openQuestion(q.id) } },
          el("span", {}, q.id),
          el("span", { class: "muted progress" }, t("progress_short", q.progress)),
        ),
      ),
    );
  }
  nav.replaceChildren(el("h2", {}, t("questions")), list);
}

// ------------------------------------------------------------------ one question
function answerOf(ref) {
  return state.current.answers[ref];
}

function membersOf(group) {
  return group.members.map(answerOf);
}

// The selectable units in page order: each group that takes decisions, then its members when open.
function unitKeys() {
  if (!state.current) return [];
  const keys = [];
  for (const group of state.current.groups) {
    if (group.kind === "blank") continue;
    keys.push("g:" + group.representative);
    if (state.expanded.has(group.representative) && group.members.length > 1) for (const ref of group.members) keys.push("a:" + ref);
  }
  return keys;
}

function unitTargets(key) {
  if (!key) return [];
  if (key.startsWith("a:")) return [answerOf(key.slice(2))];
  const group = state.current.groups.find((g) => g.representative === key.slice(2));
  return group ? membersOf(group) : [];
}

function renderQuestion() {
  const q = state.current;
  const box = document.getElementById("question");
  if (!box || !q) return;
  const head = el(
    "section",
    { class: "card", id: "question-text" },
    el("h2", {}, t("question") + " " + q.id + " · " + t("points", { points: number(q.points) })),
    el("p", { class: "muted", id: "question-progress" }, t("progress", q.progress)),
    el("pre", {}, q.text[LANG] || q.text.en || ""),
    el("details", {}, el("summary", {}, t("model_answer")), el("pre", {}, q.model[LANG] || q.model.en || "")),
  );
  box.replaceChildren(head, renderRubric(q), renderConsistency(q), el("h2", {}, t("groups")), ...q.groups.map(renderGroup));
  if (!q.groups.length) box.append(el("p", { class: "muted" }, t("nothing")));
  markSelection(false);
}

function renderRubric(q) {
  const list = el("div", { class: "items", id: "rubric" });
  q.items.forEach((item, index) => {
    const key = index < 9 ? String(index + 1) : "";
    const row = el(
      "div",
      { class: "item", id: "item-" + index },
      el("kbd", {}, key || "·"),
      el("span", { class: "mark" }, (item.points > 0 ? "+" : "") + number(item.points)),
      el("span", { class: "wording" }, item.marker[LANG] || item.marker.en, el("br"), el("span", { class: "muted" }, item.student[LANG] || item.student.en)),
      el("button", { type: "button", class: "edit-item", on: { click: () => openEdit(item.id) } }, t("edit")),
    );
    list.append(row);
    if (state.editing === item.id) list.append(itemForm(item));
  });
  const add = el("button", { type: "button", id: "add-item", on: { click: () => openEdit("new") } }, t("add_item"));
  return el("section", { class: "card" }, el("h2", {}, t("rubric")), list, state.editing === "new" ? itemForm(null) : add);
}

function openEdit(id) {
  state.editing = id;
  renderQuestion();
  const first = document.querySelector("form.item-form input");
  if (first) first.focus();
}

function itemForm(item) {
  const field = (name, label, value, multiline) =>
    el("label", {}, label, multiline ? el("textarea", { name, value: value || "", maxlength: "500" }) : el("input", { name, type: "number", step: "0.25", value: value === undefined ? "" : String(value), required: "" }));
  const form = el(
    "form",
    { class: "inline item-form", on: { submit: onSubmit } },
    field("points", t("item_points"), item ? item.points : undefined, false),
    field("marker_en", t("marker_text_en"), item && item.marker.en, true),
    field("marker_ru", t("marker_text_ru"), item && item.marker.ru, true),
    field("student_en", t("student_text_en"), item && item.student.en, true),
    field("student_ru", t("student_text_ru"), item && item.student.ru, true),
    el("div", { class: "row" }, el("button", { type: "submit", class: "save-item" }, t("save")), el("button", { type: "button", on: { click: () => openEdit(null) } }, t("cancel"))),
  );
  return form;

  async function onSubmit(event) {
    event.preventDefault();
    const value = (name) => form.elements[name].value;
    const body = {
      points: Number(value("points")),
      marker: { en: value("marker_en"), ru: value("marker_ru") },
      student: { en: value("student_en"), ru: value("student_ru") },
    };
    if (item) await act("/api/item/edit", { item: item.id, version: item.version, ...body });
    else await act("/api/item/add", { question: state.current.id, ...body });
  }
}

function renderConsistency(q) {
  const found = q.consistency && q.consistency[LANG];
  if (!found || found.rows.length < 2) return el("span", {});
  const [head, ...rows] = found.rows;
  const table = el("table", { class: "consistency" }, el("tr", {}, head.map((h) => el("th", {}, h))));
  for (const row of rows) table.append(el("tr", {}, row.map((cell) => el("td", {}, cell))));
  const note = found.off_group ? el("p", { class: "inconsistent" }, t("off_group_count", { n: found.off_group })) : null;
  return el("section", { class: "card", id: "consistency" }, el("h2", {}, t("consistency")), table, note);
}

// The state of an item over some answers: "true" (all carry it), "false" (none), "mixed".
function carried(answers, itemId) {
  const count = answers.filter((a) => a.items.includes(itemId)).length;
  return count === 0 ? "false" : count === answers.length ? "true" : "mixed";
}

function markText(answers) {
  const q = state.current;
  const marks = new Set(answers.map((a) => (a.mark === null ? "" : number(a.mark))));
  if (marks.size > 1) return t("mixed");
  const mark = [...marks][0];
  return mark === "" ? t("not_marked") : t("mark", { mark, points: number(q.points) });
}

function toggles(key, answers) {
  return el(
    "div",
    { class: "toggles" },
    state.current.items.map((item, index) =>
      el(
        "button",
        { type: "button", class: "toggle", "aria-pressed": carried(answers, item.id), title: item.marker[LANG] || item.marker.en, on: { click: () => toggleItem(key, index) } },
        (index < 9 ? "[" + (index + 1) + "] " : "") + (item.points > 0 ? "+" : "") + number(item.points),
      ),
    ),
    el("button", { type: "button", class: "clear", on: { click: () => clearMarks(key) } }, t("clear")),
  );
}

function commentBox(key, answers, group) {
  const comments = new Set(answers.map((a) => a.comment));
  const common = comments.size === 1 ? [...comments][0] : "";
  const area = el("textarea", { class: "comment", maxlength: "4000", "aria-label": t(group ? "comment_group" : "comment") });
  area.value = state.drafts.has(key) ? state.drafts.get(key) : common;
  if (comments.size > 1) area.setAttribute("placeholder", t("comments_differ"));
  area.addEventListener("input", () => state.drafts.set(key, area.value));
  const save = el("button", { type: "button", class: "save-comment", on: { click: () => saveComment(key, area.value) } }, t("save_comment"));
  return el("div", {}, el("label", { class: "muted" }, t(group ? "comment_group" : "comment"), area), save);
}

function answerText(answer) {
  const pre = el("pre", { class: "answer-text" }, answer.text);
  if (answer.cut) pre.append(el("span", { class: "muted" }, "\n" + t("truncated", { n: answer.cut })));
  return pre;
}

function markerNote(answers) {
  const markers = [...new Set(answers.map((a) => a.marker).filter(Boolean))];
  const manual = answers.some((a) => a.manual);
  return el("span", { class: "muted" }, markers.length ? " · " + t("by", { marker: markers.join(", ") }) : "", manual ? " · " + t("manual") : "");
}

function renderGroup(group, index) {
  const answers = membersOf(group);
  const representative = answerOf(group.representative);
  const key = "g:" + group.representative;
  const open = state.expanded.has(group.representative);
  const card = el("section", { class: "card group", "data-kind": group.kind, "data-key": key, id: "group-" + index });
  const title = el("h3", {}, t("group", { n: index + 1 }) + " · " + t("kind_" + group.kind) + " · " + t("answers_count", { n: answers.length }));
  if (group.kind === "blank") {
    const list = el("details", {}, el("summary", {}, t("blank_zero")), el("p", {}, answers.map(studentLabel).join(", ")));
    card.append(title, list);
    return card;
  }
  card.append(
    title,
    el("p", {}, el("span", { class: "mark group-mark" }, markText(answers)), markerNote(answers), " · ", el("span", { class: "muted" }, t("representative") + ": " + studentLabel(representative))),
    answerText(representative),
    toggles(key, answers),
    commentBox(key, answers, true),
  );
  if (group.members.length > 1) {
    card.append(el("button", { type: "button", class: "expand", "aria-expanded": String(open), on: { click: () => toggleOpen(group.representative) } }, open ? t("hide_members") : t("members", { n: answers.length })));
    if (open) for (const answer of answers) card.append(renderMember(answer));
  } else if (group.detached) {
    card.append(el("button", { type: "button", class: "attach", on: { click: () => act("/api/attach", { question: state.current.id, ref: group.representative }) } }, t("rejoin")));
  }
  return card;
}

function renderMember(answer) {
  const key = "a:" + answer.ref;
  return el(
    "div",
    { class: "member", "data-key": key, "data-ref": answer.ref },
    el(
      "p",
      {},
      el("strong", {}, studentLabel(answer)),
      " · ",
      el("span", { class: "mark" }, markText([answer])),
      markerNote([answer]),
      answer.group_mark !== undefined ? el("span", { class: "inconsistent" }, " " + t("off_group", { mark: number(answer.group_mark) })) : null,
    ),
    answerText(answer),
    toggles(key, [answer]),
    commentBox(key, [answer], false),
    el("button", { type: "button", class: "detach", on: { click: () => act("/api/detach", { question: state.current.id, ref: answer.ref }) } }, t("leave_group")),
  );
}

// ------------------------------------------------------------------ actions
function targetsOf(answers) {
  return answers.map((a) => ({ ref: a.ref, version: a.version }));
}

async function toggleItem(key, index) {
  const item = state.current.items[index];
  const answers = unitTargets(key);
  if (!item || !answers.length) return;
  state.selected = key;
  const on = carried(answers, item.id) !== "true";
  await act("/api/apply", { question: state.current.id, targets: targetsOf(answers), add: on ? [item.id] : [], remove: on ? [] : [item.id] });
}

async function saveComment(key, text) {
  const answers = unitTargets(key);
  if (!answers.length) return;
  state.selected = key;
  const answer = await act("/api/apply", { question: state.current.id, targets: targetsOf(answers), add: [], remove: [], comment: text });
  if (answer) state.drafts.delete(key);
  renderQuestion();
}

async function clearMarks(key) {
  const answers = unitTargets(key);
  if (!answers.length) return;
  state.selected = key;
  await act("/api/clear", { question: state.current.id, targets: targetsOf(answers) });
}

function toggleOpen(ref) {
  if (state.expanded.has(ref)) state.expanded.delete(ref);
  else state.expanded.add(ref);
  state.selected = "g:" + ref;
  renderQuestion();
}

function markSelection(scroll) {
  for (const node of document.querySelectorAll(".selected")) node.classList.remove("selected");
  if (!state.selected) return;
  const node = [...document.querySelectorAll("[data-key]")].find((n) => n.getAttribute("data-key") === state.selected);
  if (!node) return;
  node.classList.add("selected");
  if (scroll) node.scrollIntoView({ block: "nearest" });
}

function moveSelection(step) {
  const units = unitKeys();
  if (!units.length) return;
  const at = units.indexOf(state.selected);
  state.selected = units[Math.min(Math.max(at + step, 0), units.length - 1)];
  markSelection(true);
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || !state.current || state.busy) return;
  const tag = event.target && event.target.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  if (event.key === "j") moveSelection(1);
  else if (event.key === "k") moveSelection(-1);
  else if (/^[1-9]$/.test(event.key)) toggleItem(state.selected, Number(event.key) - 1);
  else if (event.key === "o" && state.selected && state.selected.startsWith("g:")) toggleOpen(state.selected.slice(2));
  else if (event.key === "c") {
    const node = [...document.querySelectorAll("[data-key]")].find((n) => n.getAttribute("data-key") === state.selected);
    const area = node && node.querySelector("textarea.comment");
    if (area) area.focus();
  } else return;
  event.preventDefault();
}

document.addEventListener("DOMContentLoaded", start);
