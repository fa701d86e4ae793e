// coterie observe: the page. Plain JavaScript, no framework, no build step.
// Everything shown comes from the run (model text, tool output, actor names):
// it is data, so it is only ever set as text, never as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = tag.startsWith("svg:")
    ? document.createElementNS(SVG, tag.slice(4))
    : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

const cssName = (state) => String(state || "").replace(/[^a-z]+/gi, "-");

// -- the run list -------------------------------------------------------------

let runsTimer = null;

async function loadRuns() {
  const response = await fetch("api/runs", { cache: "no-store" });
  if (!response.ok) return;
  const data = await response.json();
  $("workdir").textContent = data.workdir;
  const body = $("runs").tBodies[0];
  body.replaceChildren(
    ...data.runs.map((run) =>
      el("tr", { "data-run": run.run_id },
        el("td", {}, el("a", { href: "#run=" + encodeURIComponent(run.run_id), text: run.run_id })),
        el("td", { text: run.command }),
        el("td", {}, el("span", { class: "badge state-" + cssName(run.state), text: run.state })),
        el("td", { class: "request", text: run.request }),
        el("td", { text: run.updated_at ? new Date(run.updated_at * 1000).toLocaleTimeString() : "" })))
  );
}

// -- one run ----------------------------------------------------------------

const run = {
  id: null, source: null, actors: new Map(), messages: [], timeline: [], tasks: new Map(),
  mailboxes: {}, live: false, working: false, messageCount: 0, drawPending: false,
};

function openRun(id) {
  closeRun();
  run.id = id;
  $("run-title").textContent = "Run " + id;
  const source = new EventSource("api/runs/" + encodeURIComponent(id) + "/events");
  run.source = source;
  source.addEventListener("snapshot", (e) => { reset(JSON.parse(e.data)); schedule(); });
  source.addEventListener("delta", (e) => { merge(JSON.parse(e.data)); schedule(); });
  source.onopen = () => { $("status").textContent = "live updates"; };
  source.onerror = () => { $("status").textContent = "reconnecting…"; };
}

function closeRun() {
  if (run.source) run.source.close();
  run.source = null;
  run.id = null;
}

function reset(snapshot) {
  run.actors = new Map();
  run.tasks = new Map();
  run.mailboxes = {};
  run.messages = [];
  run.timeline = [];
  merge(snapshot);
}

// A delta carries only what changed: rows and tasks whole (replacing ours),
// mailbox counts by name, messages and timeline entries to append.
function merge(delta) {
  for (const actor of delta.actors) run.actors.set(actor.name, actor);
  for (const task of delta.tasks) run.tasks.set(task.id, task);
  Object.assign(run.mailboxes, delta.mailboxes);
  run.messages.push(...delta.messages);
  run.timeline.push(...delta.timeline);
  if (run.messages.length > 500) run.messages.splice(0, run.messages.length - 500);
  if (run.timeline.length > 500) run.timeline.splice(0, run.timeline.length - 500);
  run.live = delta.live;
  run.working = delta.working;  // live and not finished: something left to cancel or poke
  run.messageCount = delta.message_count;
}

function schedule() {
  if (run.drawPending) return;
  run.drawPending = true;
  requestAnimationFrame(() => { run.drawPending = false; draw(); });
}

function draw() {
  const said = run.working ? "running" : run.live ? "finished" : "not running";
  $("run-live").textContent = said;
  $("run-live").className = "badge state-" + (run.working ? "running" : "stopped");
  // A finished run has nothing to cancel: the button goes, not just greys out.
  $("cancel-run").hidden = !run.working;
  $("cancel-run").disabled = !run.working;
  drawTree();
  drawBoard();
  drawTimeline();
  drawSpend();
  drawSequence();
}

// -- faults -------------------------------------------------------------------

async function inject(fault, actor) {
  const body = { fault, actor, reason: fault === "crash" ? "crashed from the observer" : null };
  $("fault-result").textContent = fault + (actor ? " " + actor : "") + "…";
  try {
    const response = await fetch("api/runs/" + encodeURIComponent(run.id) + "/fault", {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const answer = await response.json();
    $("fault-result").textContent = response.ok
      ? fault + (actor ? " " + actor : "") + ": done"
      : fault + " refused: " + answer.error;
  } catch (err) {
    $("fault-result").textContent = fault + " failed: " + err;
  }
}

$("cancel-run").addEventListener("click", () => {
  if (confirm("Cancel run " + run.id + "? It can be resumed with coterie resume.")) inject("cancel", null);
});

// -- the supervision tree -------------------------------------------------------

function trailOf(name) {
  // What the supervisors did to this actor lately: a crash and restart last
  // milliseconds, so the tree keeps the last few for a person to see.
  const shown = ["actor.crashed", "actor.restarted", "supervisor.gave_up", "supervisor.escalated", "fault.injected"];
  const recent = run.timeline.filter((t) => t.actor === name && shown.includes(t.type)).slice(-3);
  return el("span", { class: "trail" },
    ...recent.map((t) => el("span", { class: t.type.split(".")[1], text: " " + t.type.split(".")[1] })));
}

function drawTree() {
  const children = new Map();
  const roots = [];
  for (const actor of run.actors.values()) {
    if (actor.supervisor && run.actors.has(actor.supervisor)) {
      if (!children.has(actor.supervisor)) children.set(actor.supervisor, []);
      children.get(actor.supervisor).push(actor);
    } else roots.push(actor);
  }
  // "✉ 2 · 1 in flight": waiting, and handed out but not acknowledged yet
  // (in_flight is absent when only the total is known: then it is the total).
  const mailBadge = (mail) => mail.in_flight === undefined
    ? el("span", { class: "mailbox", title: "unacknowledged messages (pending or in flight)", text: "✉ " + mail.pending })
    : el("span", { class: "mailbox", "data-pending": mail.pending, "data-in-flight": mail.in_flight,
        title: mail.pending + " pending, " + mail.in_flight + " in flight (handed out, not acknowledged)",
        text: "✉ " + mail.pending + (mail.in_flight ? " · " + mail.in_flight + " in flight" : "") });
  const item = (actor) => {
    // Faults only where the control channel takes them (not on the actors that
    // carry it: the fold says which), and only while the run works.
    const poke = actor.faults && run.working;
    const mail = run.mailboxes[actor.name];
    const node = el("div", { class: "node " + actor.kind, "data-actor": actor.name, "data-state": actor.state },
      el("span", { class: "name", text: actor.name }),
      el("span", { class: "badge state state-" + cssName(actor.state), text: actor.state }),
      actor.restarts ? el("span", { class: "restarts", text: "↻ " + actor.restarts }) : null,
      mail !== undefined ? mailBadge(mail) : null,
      actor.task ? el("span", { class: "restarts", text: actor.task }) : null,
      trailOf(actor.name),
      poke ? el("button", { type: "button", class: "danger", "data-fault": "crash", text: "crash",
        title: "make " + actor.name + " raise, as a bug would", on: { click: () => inject("crash", actor.name) } }) : null,
      poke ? el("button", { type: "button", "data-fault": "stop", text: "stop",
        title: "make " + actor.name + " exit normally", on: { click: () => inject("stop", actor.name) } }) : null);
    if (actor.reason) node.title = actor.reason;
    const kids = children.get(actor.name) || [];
    return el("li", {}, node, kids.length ? el("ul", {}, ...kids.map(item)) : null);
  };
  $("tree").replaceChildren(...roots.map(item));
}

// -- the task board as a dependency graph ----------------------------------------

const taskNumber = (task) => Number(String(task.id).replace(/\D+/g, "")) || 0;

function drawBoard() {
  const svg = $("board");
  const tasks = [...run.tasks.values()].sort((a, b) => taskNumber(a) - taskNumber(b));
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const level = new Map();
  const levelOf = (task, seen = new Set()) => {
    if (level.has(task.id)) return level.get(task.id);
    if (seen.has(task.id)) return 0;
    seen.add(task.id);
    const deps = (task.blocked_by || []).map((id) => byId.get(id)).filter(Boolean);
    const value = deps.length ? 1 + Math.max(...deps.map((d) => levelOf(d, seen))) : 0;
    level.set(task.id, value);
    return value;
  };
  const columns = [];
  for (const task of tasks) {
    const l = levelOf(task);
    (columns[l] = columns[l] || []).push(task);
  }
  const W = 170, H = 52, GX = 40, GY = 16, PAD = 8;
  const pos = new Map();
  columns.forEach((col, x) => col.forEach((task, y) => pos.set(task.id, { x: 10 + x * (W + GX), y: 10 + y * (H + GY) })));
  const width = 20 + Math.max(1, columns.length) * (W + GX);
  const height = 20 + Math.max(1, ...columns.map((c) => c.length)) * (H + GY);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  const defs = el("svg:defs", {}, el("svg:marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, el("svg:path", { d: "M 0 0 L 10 5 L 0 10 z" })));
  const edges = [];
  for (const task of tasks) {
    for (const dep of task.blocked_by || []) {
      const a = pos.get(dep), b = pos.get(task.id);
      if (!a || !b) continue;
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
      edges.push(el("svg:path", { class: "edge", "data-from": dep, "data-to": task.id, "marker-end": "url(#arrow)",
        d: `M ${x1} ${y1} C ${x1 + GX / 2} ${y1}, ${x2 - GX / 2} ${y2}, ${x2} ${y2}` }));
    }
  }
  const nodes = tasks.map((task) => {
    const p = pos.get(task.id);
    const subject = String(task.subject || "");
    return el("svg:g", { class: "task " + cssName(task.status), "data-task": task.id, "data-status": task.status,
      transform: `translate(${p.x},${p.y})` },
      el("svg:title", { text: task.id + ": " + subject + (task.owner ? " (" + task.owner + ")" : "") }),
      el("svg:rect", { width: W, height: H, rx: 5 }),
      el("svg:text", { x: PAD, y: 17, class: "fit", text: task.id + "  " + subject }),
      el("svg:text", { x: PAD, y: 36, class: "meta fit", text: task.status + (task.owner ? " · " + task.owner : "") }));
  });
  svg.replaceChildren(defs, ...edges, ...nodes);
  for (const line of svg.querySelectorAll("text.fit")) fit(line, W - 2 * PAD);
}

// An SVG text cannot wrap or ellipsize itself: cut it (at the longest prefix that
// fits, found by bisection) and end it with "…". The whole text stays in the box's title.
function fit(text, width) {
  const whole = text.textContent;
  if (text.getComputedTextLength() <= width) return;
  let low = 0, high = whole.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    text.textContent = whole.slice(0, mid) + "…";
    if (text.getComputedTextLength() <= width) low = mid; else high = mid - 1;
  }
  text.textContent = whole.slice(0, low) + "…";
}

// -- the supervision timeline -------------------------------------------------

function drawTimeline() {
  const items = run.timeline.slice(-200).map((t) => {
    const what = t.type.split(".")[1];
    const who = t.actor || t.supervisor || "";
    let text = `${t.type} ${who}`;
    if (t.type === "fault.injected") text = `fault.injected ${t.fault} ${who || ""} by ${t.by || "?"}`;
    if (t.supervisor && t.actor) text += ` (under ${t.supervisor})`;
    if (t.reason) text += `: ${t.reason}`;
    return el("li", { class: "t-" + what, "data-type": t.type, "data-actor": who },
      el("time", { text: t.ts ? new Date(t.ts * 1000).toLocaleTimeString() : "" }), text);
  });
  $("timeline").replaceChildren(...items);
}

// -- turns, tokens and cost ---------------------------------------------------

function drawSpend() {
  const rows = [...run.actors.values()].filter((a) => a.turns || a.input_tokens);
  const total = { turns: 0, input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
    output_tokens: 0, cost_usd: 0 };
  const cells = (a, tag) => Object.keys(total).map((key) =>
    el(tag, { text: key === "cost_usd" ? (a[key] || 0).toFixed(4) : a[key] || 0 }));
  const body = rows.map((a) => {
    for (const key of Object.keys(total)) total[key] += a[key] || 0;
    return el("tr", { "data-actor": a.name }, el("td", { text: a.name }), ...cells(a, "td"));
  });
  $("spend").tBodies[0].replaceChildren(...body);
  $("spend").tFoot.replaceChildren(el("tr", {}, el("th", { text: "total" }), ...cells(total, "th")));
}

// -- the message sequence chart ------------------------------------------------

function drawSequence() {
  const svg = $("sequence");
  const shown = run.messages.slice(-80);
  $("message-count").textContent = `(${run.messageCount}${run.messageCount > shown.length ? ", last " + shown.length + " shown" : ""})`;
  const names = [];
  for (const m of shown) for (const n of [m.sender, m.recipient]) if (n && !names.includes(n)) names.push(n);
  const COL = 130, ROW = 24, TOP = 24;
  const x = (n) => 70 + names.indexOf(n) * COL;
  const height = TOP + 16 + shown.length * ROW;
  svg.setAttribute("width", 80 + Math.max(1, names.length) * COL);
  svg.setAttribute("height", height);
  const defs = el("svg:defs", {}, el("svg:marker", { id: "head", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" }, el("svg:path", { d: "M 0 0 L 10 5 L 0 10 z" })));
  const lanes = names.flatMap((n) => [
    el("svg:text", { x: x(n), y: 14, "text-anchor": "middle", text: n }),
    el("svg:line", { class: "lifeline", x1: x(n), y1: 20, x2: x(n), y2: height }),
  ]);
  const arrows = shown.flatMap((m, i) => {
    const y = TOP + 16 + i * ROW;
    const x1 = x(m.sender), x2 = x(m.recipient);
    return [
      el("svg:line", { class: "msg", x1, y1: y, x2: x2 === x1 ? x1 + 30 : x2, y2: y, "marker-end": "url(#head)",
        "data-sender": m.sender, "data-recipient": m.recipient }),
      el("svg:text", { class: "msg-label", x: Math.min(x1, x2) + 6, y: y - 4,
        text: `${m.kind}: ${String(m.text || "").slice(0, 40)}` }, el("svg:title", { text: m.text })),
    ];
  });
  svg.replaceChildren(defs, ...lanes, ...arrows);
}

// -- routing --------------------------------------------------------------------

function route() {
  const match = /^#run=(.+)$/.exec(location.hash);
  const id = match ? decodeURIComponent(match[1]) : null;
  $("runs-view").hidden = Boolean(id);
  $("run-view").hidden = !id;
  clearInterval(runsTimer);
  if (id) {
    if (run.id !== id) openRun(id);
  } else {
    closeRun();
    $("status").textContent = "";
    loadRuns();
    runsTimer = setInterval(loadRuns, 2000);
  }
}

window.addEventListener("hashchange", route);
route();
