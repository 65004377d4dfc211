// The team panel (shown when the server has /v1/team): the teammates with their role, status and
// unread messages, each opening its session, shut down or revived; the lead's inbox (peeked, so
// an agent reading it still gets every message; "Mark read" reads it), a teammate's plan approved
// or rejected there; a message to a teammate (one offline gets it when revived); a new teammate.
// While open it follows the team every POLL_MS.
import { h, modal, iconButton, smallButton, toast, confirmBox, localTime } from "./dom.js";
import { listOf } from "./features.js";

const POLL_MS = 2000;
const LIVE = new Set(["working", "idle"]); // offline and shut down ones can be revived

const field = (label, control) => h("label", { class: "field grow" }, h("span", { class: "field-label" }, label), control);

export function openTeam(app) {
  const api = app.api;
  const list = h("ul", { class: "panel-list team-list" });
  const inbox = h("ul", { class: "panel-list inbox" });
  const messages = new Map(); // id -> message: what this panel has seen of the inbox
  const to = h("select", { "aria-label": "Teammate", required: true });
  const text = h("textarea", { rows: 2, "aria-label": "Message", placeholder: "What the teammate should know or do", required: true });
  const send = h("form", { class: "panel-form team-message" }, h("div", { class: "row" }, field("To", to), h("button", { class: "btn primary", type: "submit" }, "Send")), text);
  const name = h("input", { "aria-label": "Teammate name", placeholder: "e.g. alice", required: true, autocomplete: "off" });
  const role = h("input", { "aria-label": "Role", placeholder: "e.g. reviewer", autocomplete: "off" });
  const agent = h("input", { "aria-label": "Identity", placeholder: "optional, e.g. coder", autocomplete: "off" });
  const prompt = h("textarea", { rows: 2, "aria-label": "Teammate prompt", placeholder: "Its standing instructions (optional)" });
  const spawn = h(
    "form",
    { class: "panel-form team-spawn" },
    h("div", { class: "row" }, field("Name", name), field("Role", role), field("Identity", agent)),
    prompt,
    h("div", { class: "row end" }, h("button", { class: "btn primary", type: "submit" }, "Add teammate")),
  );
  const markRead = smallButton("Mark read", () => load(false));
  const dialog = modal("Team", { wide: true });
  dialog.body.append(
    list,
    h("h3", {}, "Message a teammate"),
    send,
    h("div", { class: "row inbox-head" }, h("h3", {}, "Inbox"), markRead),
    inbox,
    h("details", { class: "team-add" }, h("summary", {}, "Add a teammate"), spawn),
  );

  const row = (mate) =>
    h(
      "li",
      { class: `panel-item teammate ${mate.status}`, dataset: { name: mate.name } },
      h(
        "div",
        { class: "panel-text" },
        h("strong", {}, mate.name),
        h("span", { class: "tag" }, mate.role),
        h("span", { class: `status ${mate.status}` }, mate.status),
        mate.unread ? h("span", { class: "badge", title: "unread messages" }, `${mate.unread} unread`) : null,
        mate.agent ? h("div", { class: "muted" }, `as ${mate.agent}`) : null,
      ),
      h(
        "div",
        { class: "panel-actions" },
        mate.topic_id ? h("a", { class: "btn small", href: "#", dataset: { session: mate.topic_id } }, "Open") : null,
        smallButton("Message", () => { to.value = mate.name; text.focus(); }),
        LIVE.has(mate.status)
          ? iconButton("trash", `Shut down ${mate.name}`, () => shutDown(mate))
          : smallButton("Revive", () => act(api.post("/v1/team", { name: mate.name }), `${mate.name} is back`), "Start it again in its session"),
      ),
    );

  const shutDown = async (mate) => {
    if (!(await confirmBox(`Shut down ${mate.name}?`, "Shut down"))) return;
    await act(api.del(`/v1/team/${encodeURIComponent(mate.name)}`), `${mate.name} is shutting down`);
  };

  const line = (m) =>
    h(
      "li",
      { class: m.read_at ? "message read" : "message", dataset: { id: m.id } },
      h("div", { class: "muted" }, h("strong", {}, m.sender), h("span", { class: "tag" }, m.kind), ` · ${localTime(m.created_at)}`),
      h("div", { class: "message-text" }, m.text),
      // a teammate's plan waits for the lead's verdict
      m.kind === "plan_approval" && m.sender !== "lead"
        ? h("div", { class: "row" }, ["approve", "reject"].map((verdict) => smallButton(verdict, () => act(api.post("/v1/team/messages", { to: m.sender, text: verdict, kind: "plan_approval" }), `Plan ${verdict}d`))))
        : null,
    );

  // peek: leave the messages unread; false: read them (marked read on the server)
  async function load(peek = true) {
    let mates;
    let unread;
    try {
      [mates, unread] = await Promise.all([api.get("/v1/team"), api.get(`/v1/team/inbox?address=lead${peek ? "&peek=true" : ""}`)]);
    } catch (error) {
      list.replaceChildren(h("li", { class: "form-error" }, error.message));
      list.dataset.signature = "";
      return;
    }
    mates = listOf(mates);
    const now = Date.now() / 1000;
    for (const m of listOf(unread)) messages.set(m.id, peek ? m : { ...m, read_at: m.read_at || now });
    const shown = [...messages.values()].sort((a, b) => b.id - a.id);
    // redrawn only when something changed: a poll must not close an open <select> or a click
    const signature = JSON.stringify([mates, shown.map((m) => [m.id, Boolean(m.read_at)])]);
    if (signature === list.dataset.signature) return;
    list.dataset.signature = signature;
    list.replaceChildren(...(mates.length ? mates.map(row) : [h("li", { class: "list-empty" }, "No teammates yet.")]));
    const chosen = to.value;
    to.replaceChildren(...mates.map((m) => h("option", { value: m.name }, `${m.name} (${m.role})`)));
    if (chosen) to.value = chosen;
    markRead.disabled = !shown.some((m) => !m.read_at);
    inbox.replaceChildren(...(shown.length ? shown.map(line) : [h("li", { class: "list-empty" }, "No messages.")]));
  }

  const act = async (promise, message) => {
    try {
      await promise;
    } catch (error) {
      toast(error.message, "error", 6000);
      return false;
    }
    toast(message, "ok");
    await load();
    return true;
  };

  send.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (await act(api.post("/v1/team/messages", { to: to.value, text: text.value.trim() }), `Sent to ${to.value}`)) text.value = "";
  });
  spawn.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { name: name.value.trim(), role: role.value.trim(), prompt: prompt.value.trim() };
    if (agent.value.trim()) body.agent = agent.value.trim();
    if (await act(api.post("/v1/team", body), `${body.name} joined the team`)) spawn.reset();
  });
  load();
  const timer = setInterval(() => load(), POLL_MS);
  dialog.dialog.addEventListener("close", () => clearInterval(timer));
  return dialog;
}
