// The world of a workflow script (coterie/workflows/machine.py): what it asks
// of the host is queued in __coterie_outbox (the engine cannot call into Python
// under a time limit), answers come back through __coterie_settle(id, ok, json),
// and how the script ended is __coterie_outcome. MAX_ITEMS, BUDGET_TOTAL and
// ARGS are filled in before it runs.
"use strict";
globalThis.__coterie_outbox = [];
globalThis.__coterie_spent = 0;
globalThis.__coterie_outcome = null;
globalThis.__coterie_done = (value) => {
  __coterie_outcome = [true, JSON.stringify(value === undefined ? null : value) ?? "null"];
};
globalThis.__coterie_failed = (error) => {
  __coterie_outcome = [false, String(error) + (error && error.stack ? "\n" + error.stack : "")];
};
(() => {
  const outbox = globalThis.__coterie_outbox;
  const host = (kind, id, text) => { outbox.push([kind, id, text]); };
  const waiting = new Map();
  let last = 0;
  const ask = (kind, payload) => {
    const id = ++last;
    const promise = new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    host(kind, id, JSON.stringify(payload));
    return promise;
  };
  globalThis.__coterie_settle = (id, ok, text) => {
    const entry = waiting.get(id);
    if (entry === undefined) return;
    waiting.delete(id);
    if (ok) entry.resolve(JSON.parse(text));
    else entry.reject(new Error(text));
  };
  const text = (value) => (typeof value === "string" ? value : JSON.stringify(value) ?? String(value));
  const items = (what, list) => {
    if (!Array.isArray(list)) throw new TypeError(`${what}() takes an array`);
    if (list.length > MAX_ITEMS) throw new RangeError(`${what}() takes at most MAX_ITEMS items, not ${list.length}`);
  };
  globalThis.agent = (prompt, opts) => {
    if (typeof prompt !== "string" || prompt.length === 0)
      return Promise.reject(new TypeError("agent(prompt, opts): prompt must be a non-empty string"));
    if (opts !== undefined && (opts === null || typeof opts !== "object" || Array.isArray(opts)))
      return Promise.reject(new TypeError("agent(prompt, opts): opts must be an object"));
    return ask("agent", { prompt, opts: opts ?? {} });
  };
  globalThis.parallel = async (thunks) => {
    items("parallel", thunks);
    return Promise.all(thunks.map(async (thunk, index) => {
      try { return await (typeof thunk === "function" ? thunk() : thunk); }
      catch (error) { host("log", 0, JSON.stringify(`parallel() item ${index} failed: ${error && error.message || error}`)); return null; }
    }));
  };
  globalThis.pipeline = async (list, ...stages) => {
    items("pipeline", list);
    return Promise.all(list.map(async (item, index) => {
      let value = item;
      for (const [n, stage] of stages.entries()) {
        try { value = await stage(value, item, index); }
        catch (error) { host("log", 0, JSON.stringify(`pipeline() item ${index} stage ${n + 1} failed: ${error && error.message || error}`)); return null; }
      }
      return value;
    }));
  };
  globalThis.log = (message) => { host("log", 0, JSON.stringify(text(message))); };
  globalThis.phase = (title) => { host("phase", 0, JSON.stringify(text(title))); };
  globalThis.workflow = () => Promise.reject(new Error("workflow() is not available in coterie: call the Workflow tool again instead"));
  const spent = () => globalThis.__coterie_spent;
  globalThis.budget = Object.freeze({
    total: BUDGET_TOTAL,
    spent,
    remaining: () => (BUDGET_TOTAL === null ? Infinity : Math.max(0, BUDGET_TOTAL - spent())),
  });
  const refuse = (what) => () => { throw new Error(`${what} is not available in a workflow script: a resumed run must make the same calls (pass times or seeds in args)`); };
  Math.random = refuse("Math.random()");
  const RealDate = Date;
  function ScriptDate(...parts) {
    if (!new.target) return refuse("Date()")();
    if (parts.length === 0) return refuse("new Date()")();
    return new RealDate(...parts);
  }
  ScriptDate.prototype = RealDate.prototype;
  ScriptDate.UTC = RealDate.UTC;
  ScriptDate.parse = RealDate.parse;
  ScriptDate.now = refuse("Date.now()");
  globalThis.Date = ScriptDate;
  globalThis.args = ARGS;
})();
