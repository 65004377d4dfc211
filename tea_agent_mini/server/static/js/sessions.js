// The session list in the sidebar (new, switch, rename, delete, filter by title and by source,
// delete every listed session) and the tab strip of the sessions open in this page (each keeps
// streaming while another is shown).
import { h, icon, iconButton, confirmBox, relativeTime, debounce, toast } from "./dom.js";
import { prefs } from "./prefs.js";

export function sessionTitle(session) {
  return (session && session.title) || "New chat";
}

export class SessionList {
  constructor(app, { list, filter, source, deleteListed }) {
    this.app = app;
    this.list = list;
    this.filter = filter;
    this.source = source;
    this.sessions = [];
    this.editing = null;
    // the web UI's own sessions by default: API clients and tasks make many
    source.value = prefs.get("sessionSource", "ui");
    filter.addEventListener("input", debounce(() => this.refresh(), 200));
    source.addEventListener("change", () => {
      prefs.set("sessionSource", source.value);
      this.refresh();
    });
    deleteListed.addEventListener("click", () => this.removeListed());
  }

  async refresh() {
    const query = this.filter.value.trim();
    const params = new URLSearchParams({ limit: "100" });
    if (query) params.set("q", query);
    if (this.source.value) params.set("source", this.source.value);
    const path = `/v1/sessions?${params}`;
    // answers can arrive out of order: only the newest request's list is shown
    const ticket = (this.ticket = (this.ticket || 0) + 1);
    let sessions;
    try {
      sessions = (await this.app.api.get(path)).data;
    } catch (error) {
      if (ticket === this.ticket) toast(`Could not load the sessions: ${error.message}`, "error");
      return;
    }
    if (ticket !== this.ticket) return;
    this.sessions = sessions;
    if (!this.editing) this.render();
  }

  find(id) {
    return this.sessions.find((session) => session.id === id) || null;
  }

  render(force = false) {
    const active = this.app.activeId;
    const minute = Math.floor(Date.now() / 60000); // keeps "5 min ago" current
    const signature = JSON.stringify([active, minute, this.filter.value, this.source.value, this.sessions.map((s) => [s.id, s.title, s.updated, this.busy(s)])]);
    if (!force && signature === this.signature) return;
    this.signature = signature;
    const items = this.sessions.map((session) => this.item(session, session.id === active));
    if (!items.length) {
      items.push(h("li", { class: "list-empty" }, this.filter.value ? "No session matches." : "No sessions yet."));
    }
    this.list.replaceChildren(...items);
  }

  busy(session) {
    const chat = this.app.chats.get(session.id);
    return chat ? chat.busy : session.busy;
  }

  item(session, active) {
    const busy = this.busy(session);
    const li = h(
      "li",
      { class: active ? "session active" : "session", dataset: { id: session.id } },
      h(
        "button",
        { type: "button", class: "session-open", onclick: () => this.app.openSession(session.id) },
        h("span", { class: "session-title" }, sessionTitle(session)),
        h(
          "span",
          { class: "session-meta" },
          busy ? h("span", { class: "busy-dot", title: "running" }) : null,
          relativeTime(session.updated),
          session.source && session.source !== "ui" ? h("span", { class: "session-source" }, session.source) : null,
        ),
      ),
      h(
        "span",
        { class: "session-actions" },
        iconButton("edit", "Rename", () => this.startRename(session, li)),
        iconButton("trash", "Delete", () => this.remove(session)),
      ),
    );
    return li;
  }

  startRename(session, li) {
    this.editing = session.id;
    const input = h("input", { class: "rename-input", value: session.title || "", "aria-label": "Session title", maxlength: "200" });
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      this.editing = null;
      const title = input.value.trim();
      if (save && title && title !== session.title) {
        try {
          await this.app.api.patch(`/v1/sessions/${session.id}`, { title });
        } catch (error) {
          toast(`Rename failed: ${error.message}`, "error");
        }
      }
      await this.refresh();
      this.render(true);
      this.app.renderAll();
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") finish(true);
      else if (event.key === "Escape") {
        event.stopPropagation();
        finish(false);
      }
    });
    input.addEventListener("blur", () => finish(true));
    li.replaceChildren(input);
    input.focus();
    input.select();
  }

  async remove(session) {
    const ok = await confirmBox(`Delete “${sessionTitle(session)}” and all its messages?`);
    if (!ok) return;
    try {
      await this.app.api.del(`/v1/sessions/${session.id}`);
    } catch (error) {
      toast(`Delete failed: ${error.message}`, "error");
      return;
    }
    this.app.closeSession(session.id);
    await this.refresh();
  }

  async removeListed() {
    const ids = this.sessions.map((session) => session.id);
    if (!ids.length) return;
    const ok = await confirmBox(`Delete the ${ids.length} session(s) listed and all their messages?`);
    if (!ok) return;
    try {
      await this.app.api.post("/v1/sessions/delete", { ids });
    } catch (error) {
      toast(`Delete failed: ${error.message}`, "error");
      return;
    }
    for (const id of ids) this.app.closeSession(id);
    await this.refresh();
  }
}

export function renderTabs(app, container) {
  const describe = (id) => {
    const chat = app.chats.get(id);
    return [id, sessionTitle(app.sessionList.find(id) || (chat && chat.session)), Boolean(chat && chat.busy)];
  };
  const signature = JSON.stringify([app.activeId, app.openIds.map(describe)]);
  if (container.signature === signature) return;
  container.signature = signature;
  const tabs = app.openIds.map((id) => {
    const chat = app.chats.get(id);
    const session = app.sessionList.find(id) || (chat && chat.session);
    const active = id === app.activeId;
    return h(
      "div",
      { class: active ? "tab active" : "tab", role: "tab", "aria-selected": String(active), dataset: { id } },
      h(
        "button",
        { type: "button", class: "tab-open", title: sessionTitle(session), onclick: () => app.openSession(id) },
        chat && chat.busy ? h("span", { class: "spinner", title: "running" }) : null,
        h("span", { class: "tab-title" }, sessionTitle(session)),
      ),
      h("button", { type: "button", class: "tab-close", title: "Close tab", "aria-label": "Close tab", onclick: () => app.closeSession(id) }, icon("x")),
    );
  });
  container.replaceChildren(...tabs);
  const active = container.querySelector(".tab.active");
  if (active) active.scrollIntoView({ block: "nearest", inline: "nearest" });
}
