// The labeling page: one item at a time, answers by key, every write sent (and retried) in order.
"use strict";
const itemBox = document.getElementById("item");
const statusBox = document.getElementById("status");
const helpBox = document.getElementById("help");
const nClasses = Number(document.body.dataset.classes);
const OUTBOX = "labelwise-outbox";  // writes not yet answered by the server, sent again after a reload
let queue = [];                      // items to show, the current one first
let chain = Promise.resolve();       // writes and fetches, one after the other, in order
let fetching = false;
const inFlight = new Set();          // draws answered or skipped here whose write the server has not answered
let saved = 0;

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const newKey = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
const outbox = () => JSON.parse(localStorage.getItem(OUTBOX) || "[]");
const setOutbox = (list) => localStorage.setItem(OUTBOX, JSON.stringify(list));

function status(text) {
  const unsent = outbox().length;
  statusBox.textContent = text + ` · ${saved} saved` + (unsent ? ` · ${unsent} sending` : "");
}

// POST until the server answers: network failures and 5xx are retried with the same body (and key).
async function send(path, body) {
  for (let wait = 250; ; wait = Math.min(2 * wait, 8000)) {
    let reply;
    try {
      reply = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                                 body: JSON.stringify(body), credentials: "same-origin"});
    } catch (err) {
      status("offline: retrying");
      await sleep(wait);
      continue;
    }
    if (reply.status === 401) { location.href = "/login"; return new Promise(() => {}); }
    if (reply.status >= 500 || reply.status === 429) { await sleep(wait); continue; }
    return {ok: reply.ok, body: await reply.json()};
  }
}

// Queue a write after the earlier ones; it is kept in the outbox until the server has answered it.
function write(path, body) {
  const entry = {id: newKey(), path, body};
  setOutbox([...outbox(), entry]);
  const done = chain.then(() => send(path, body)).then((reply) => {
    setOutbox(outbox().filter((e) => e.id !== entry.id));
    if (!reply.ok) status(reply.body.detail);
    return reply;
  });
  chain = done.catch(() => {});
  return done;
}

function render() {
  const item = queue[0];
  if (!item) {
    itemBox.textContent = "Nothing to label right now: every item drawn is answered or with another annotator. " +
      "This page asks again in a few seconds.";
    return;
  }
  itemBox.innerHTML = item.html;  // rendered and escaped by the server
  if (item.role === "overlap") {
    const note = document.createElement("p");
    note.className = "role";
    note.textContent = "second opinion (for agreement)";
    itemBox.prepend(note);
  }
}

// Keep a few items ahead; the fetch waits for the writes before it, so it never returns an answered item.
function fill() {
  if (fetching || queue.length > 3) return;
  fetching = true;
  chain = chain.then(async () => {
    try {
      const reply = await fetch("/api/next?n=8", {credentials: "same-origin"});
      if (reply.status === 401) { location.href = "/login"; return; }
      const data = await reply.json();
      const shown = queue.length;
      for (const item of data.items || []) {
        if (!inFlight.has(item.draw) && !queue.some((q) => q.draw === item.draw)) queue.push(item);
      }
      if (shown === 0) render();
      status(`${data.n_labels} labels in the session`);
    } catch (err) {
      status("offline: retrying");
    } finally {
      fetching = false;
    }
  });
}

// Show the next item at once; the write follows (an item in flight is never shown again meanwhile).
function leave(path, body) {
  const item = queue.shift();
  if (!item) return null;
  render();
  inFlight.add(item.draw);
  const done = write(path, body(item));
  done.then(() => inFlight.delete(item.draw));
  fill();
  return done;
}

function answer(label) {
  const done = leave("/api/labels", (item) => ({item_id: item.item_id, label, draw: item.draw,
                                                 idempotency_key: newKey()}));
  if (done) done.then((reply) => {
    if (reply.ok) { saved += reply.body.replayed ? 0 : 1; status(`${reply.body.n_labels} labels in the session`); }
  });
}

function skip() {
  const done = leave("/api/skip", (item) => ({item_id: item.item_id}));
  if (done) done.then(() => status("skipped: it comes back later"));
}

function undo() {
  write("/api/undo", {idempotency_key: newKey()}).then((reply) => {
    if (!reply.ok) return;
    saved -= 1;
    queue = queue.filter((q) => q.draw !== reply.body.draw);
    queue.unshift({item_id: reply.body.item_id, draw: reply.body.draw, role: reply.body.role, html: reply.body.html});
    render();
    status(`undone: item ${reply.body.item_id} (label ${reply.body.label}) is shown again`);
  });
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  const k = event.key;
  if (k === "?") helpBox.hidden = !helpBox.hidden;
  else if (k === " ") skip();
  else if (k === "Backspace") undo();
  else if (nClasses === 2 && (k === "a" || k === "x")) answer(k === "a" ? 1 : 0);
  else if (/^[1-9]$/.test(k) && Number(k) <= nClasses) answer(Number(k) - 1);
  else return;
  event.preventDefault();
});

document.getElementById("answers").addEventListener("click", (event) => {
  const button = event.target.closest("button");
  if (!button) return;
  const action = button.dataset.action;
  if (action === "skip") skip();
  else if (action === "undo") undo();
  else if (action === "help") helpBox.hidden = !helpBox.hidden;
  else answer(Number(button.dataset.label));
  button.blur();
});

// Writes left from an earlier visit go first, with their keys: the server stores each once.
for (const entry of outbox()) {
  chain = chain.then(() => send(entry.path, entry.body)).then(() => setOutbox(outbox().filter((e) => e.id !== entry.id)));
}
fill();
setInterval(() => { if (!queue.length) fill(); }, 4000);
