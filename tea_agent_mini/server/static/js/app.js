// The page: wires the parts together, keeps the open sessions (tabs) and which one is shown.
import { $, h, icon, toast, formatTokens } from "./dom.js";
import { Api } from "./api.js";
import { applyTheme, prefs, tabState, eventMarks } from "./prefs.js";
import { Features } from "./features.js";
import { ChatView } from "./chat.js";
import { SessionList, renderTabs } from "./sessions.js";
import { renderQueue } from "./queue.js";
import { Composer } from "./composer.js";
import { openSettings, askApiKey, toggleTheme } from "./settings.js";
import { openSetup } from "./setup.js";
import { openSearch } from "./search.js";
import { openMemory } from "./memory.js";
import { openTasks } from "./tasks.js";
import { openTeam } from "./team.js";
import { openFlows } from "./flows.js";
import { openLearning, hasLearning } from "./learning.js";
import { openExport } from "./export.js";
import { NoticeBell } from "./notices.js";

const PHONE = "(max-width: 760px)";

class App {
  constructor() {
    this.api = new Api();
    this.api.onUnauthorized = askApiKey;
    this.features = new Features();
    this.config = null;
    this.chats = new Map();
    this.openIds = tabState.get("tabs", []);
    this.activeId = tabState.get("active", null);
    this.root = $("#app");
    this.chatArea = $("#chat-area");
    this.sessionList = new SessionList(this, {
      list: $("#session-list"),
      filter: $("#session-filter"),
      source: $("#session-source"),
      deleteListed: $("#delete-listed"),
    });
    this.composer = new Composer(this, {
      form: $("#composer"),
      input: $("#input"),
      send: $("#send"),
      stop: $("#stop"),
      attach: $("#attach"),
      fileInput: $("#file-input"),
      chips: $("#attachments"),
    });
    this.notices = new NoticeBell(this, $("#notices"));
    this.renderPending = false;
  }

  async start() {
    applyTheme();
    for (const el of document.querySelectorAll("[data-icon]")) el.prepend(icon(el.dataset.icon));
    this.bind();
    this.features = await Features.load();
    $("#open-memory").hidden = !this.features.memory;
    $("#open-tasks").hidden = !this.features.tasks;
    $("#open-team").hidden = !this.features.team;
    $("#open-flows").hidden = !this.features.flows;
    $("#open-learning").hidden = !hasLearning(this.features);
    this.notices.start();
    try {
      await this.loadConfig({ firstRun: true });
    } catch (error) {
      this.showStartError(error);
      return;
    }
    await this.sessionList.refresh();
    await this.restoreTabs();
    this.root.classList.add("ready");
  }

  showStartError(error) {
    const retry = h("button", { type: "button", class: "btn primary", onclick: () => location.reload() }, error.status === 401 ? "Enter the API key" : "Try again");
    const text = error.status === 401 ? "This server needs an API key." : `The server did not answer: ${error.message}`;
    this.chatArea.replaceChildren(h("div", { class: "empty-state" }, h("h2", {}, text), retry));
  }

  bind() {
    $("#new-chat").addEventListener("click", () => this.newSession());
    $("#open-settings").addEventListener("click", () => openSettings(this));
    $("#settings-top").addEventListener("click", () => openSettings(this));
    $("#open-search").addEventListener("click", () => openSearch(this));
    $("#open-memory").addEventListener("click", () => openMemory(this));
    $("#open-tasks").addEventListener("click", () => openTasks(this));
    $("#open-team").addEventListener("click", () => openTeam(this));
    $("#open-flows").addEventListener("click", () => openFlows(this));
    $("#open-learning").addEventListener("click", () => openLearning(this));
    document.addEventListener("click", (event) => {
      const link = event.target.closest && event.target.closest("a[data-session], a[data-topic-prefix]");
      if (!link) return;
      event.preventDefault();
      this.openLinked(link);
    });
    $("#export").addEventListener("click", () => this.activeId && openExport(this, this.activeId));
    $("#theme-toggle").addEventListener("click", toggleTheme);
    $("#setup-now").addEventListener("click", () => this.openSetup(true));
    $("#toggle-sidebar").addEventListener("click", () => this.toggleSidebar());
    $("#backdrop").addEventListener("click", () => this.root.classList.remove("sidebar-open"));
    this.root.classList.toggle("sidebar-collapsed", prefs.get("sidebarCollapsed", false));
    this.updateThemeButton(document.documentElement.dataset.theme);
    document.addEventListener("themechange", () => this.updateThemeButton(document.documentElement.dataset.theme));
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  onKey(event) {
    const dialogOpen = document.querySelector("dialog[open]");
    if (event.key === "Escape" && !dialogOpen) {
      const chat = this.active();
      if (chat && chat.busy) {
        event.preventDefault();
        this.stopActive();
      }
    } else if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k" && !dialogOpen) {
      event.preventDefault();
      openSearch(this);
    }
  }

  updateThemeButton(theme) {
    const button = $("#theme-toggle");
    button.replaceChildren(icon(theme === "dark" ? "sun" : "moon"));
    button.title = theme === "dark" ? "Light theme" : "Dark theme";
  }

  toggleSidebar() {
    if (window.matchMedia(PHONE).matches) {
      this.root.classList.toggle("sidebar-open");
    } else {
      const collapsed = this.root.classList.toggle("sidebar-collapsed");
      prefs.set("sidebarCollapsed", collapsed);
    }
  }

  async loadConfig({ firstRun = false } = {}) {
    this.config = await this.api.get("/v1/config");
    const missing = !this.config.model_configured;
    $("#setup-banner").hidden = !missing;
    const main = this.config.config.main_model;
    const shown = $("#active-profile");
    shown.textContent = missing ? `${this.config.profile} · no model` : this.config.profile;
    shown.title = missing ? "the active profile has no model" : `profile ${this.config.profile}: ${main.model_name} at ${main.api_url}`;
    if (missing && firstRun) this.openSetup(true);
  }

  openSetup(firstRun) {
    if (!document.querySelector(".setup-dialog[open]")) openSetup(this, { firstRun });
  }

  active() {
    return this.activeId ? this.chats.get(this.activeId) || null : null;
  }

  async restoreTabs() {
    const known = new Set(this.sessionList.sessions.map((s) => s.id));
    const checks = await Promise.all(
      this.openIds.map((id) => (known.has(id) ? true : this.api.get(`/v1/sessions/${id}`).then(() => true, () => false))),
    );
    this.openIds = this.openIds.filter((id, i) => checks[i]);
    let target = this.openIds.includes(this.activeId) ? this.activeId : this.openIds[0];
    // nothing open in this tab: the newest chat of the web UI, not a task's or an API client's
    if (!target) target = await this.latestChat();
    // open the other tabs in the background so their running turns re-attach as well
    for (const id of this.openIds) if (id !== target) this.chatFor(id);
    if (target) await this.openSession(target);
    else this.renderAll();
  }

  async latestChat() {
    try {
      const newest = await this.api.get("/v1/sessions?source=ui&limit=1");
      return newest.data.length ? newest.data[0].id : null;
    } catch {
      return null; // an older server without sources: start empty
    }
  }

  // The session's view, created (and its history loaded) on first use; `fresh`: known empty.
  chatFor(id, { fresh = false } = {}) {
    let chat = this.chats.get(id);
    if (!chat) {
      const session = this.sessionList.find(id) || { id, title: "" };
      chat = new ChatView(this, session);
      this.chats.set(id, chat);
      chat.ready = fresh
        ? Promise.resolve()
        : chat.load().catch((error) => toast(`Could not load the session: ${error.message}`, "error"));
    }
    if (!this.openIds.includes(id)) this.openIds.push(id);
    return chat;
  }

  async openSession(id, options = {}) {
    const previous = this.active();
    if (previous && previous.id !== id) previous.savedScroll = previous.el.scrollTop;
    const chat = this.chatFor(id, options);
    this.activeId = id;
    this.chatArea.replaceChildren(chat.el);
    if (chat.stick) chat.scrollToEnd();
    else if (chat.savedScroll !== undefined) chat.el.scrollTop = chat.savedScroll;
    this.root.classList.remove("sidebar-open");
    this.saveTabs();
    this.renderAll();
    this.composer.focus();
    return chat;
  }

  // A link to a session (a subagent's, a teammate's, a parent's). A stored subagent card knows
  // only its topic's first characters: the session is found among the parent's children.
  async openLinked(link) {
    let id = link.dataset.session;
    if (!id) {
      const parent = link.closest(".chat-log").dataset.session;
      try {
        const children = (await this.api.get(`/v1/sessions?parent=${encodeURIComponent(parent)}&limit=200`)).data;
        const child = children.find((session) => session.id.startsWith(link.dataset.topicPrefix));
        if (child) id = link.dataset.session = child.id;
      } catch (error) {
        toast(error.message, "error");
        return;
      }
    }
    if (!id) {
      toast("That session no longer exists.", "error");
      return;
    }
    const dialog = link.closest("dialog");
    if (dialog) dialog.close();
    this.openSession(id);
  }

  closeSession(id) {
    const chat = this.chats.get(id);
    if (chat) chat.close(); // the turn itself keeps running on the server
    this.chats.delete(id);
    eventMarks.drop(id);
    const index = this.openIds.indexOf(id);
    this.openIds = this.openIds.filter((other) => other !== id);
    if (this.activeId === id) {
      const next = this.openIds[Math.min(index, this.openIds.length - 1)];
      this.activeId = null;
      if (next) this.openSession(next);
      else this.chatArea.replaceChildren(h("div", { class: "empty-state" }, h("h2", {}, "No session open"), h("p", {}, "Start a new chat or pick one from the list.")));
    }
    this.saveTabs();
    this.renderAll();
  }

  saveTabs() {
    tabState.set("tabs", this.openIds);
    tabState.set("active", this.activeId);
  }

  async newSession() {
    const current = this.active();
    if (current && !current.busy && current.inner.childElementCount === 0) {
      this.composer.focus();
      return current;
    }
    const session = await this.api.post("/v1/sessions", {});
    this.sessionList.sessions.unshift(session);
    return this.openSession(session.id, { fresh: true });
  }

  async ensureChat() {
    return this.active() || this.newSession();
  }

  async stopActive() {
    const chat = this.active();
    if (!chat) return;
    try {
      await chat.stop();
    } catch (error) {
      toast(`Could not stop: ${error.message}`, "error");
    }
  }

  highlightMessage(sessionId, messageId) {
    const chat = this.chats.get(sessionId);
    if (!chat) return;
    const find = (tries) => {
      const el = chat.el.querySelector(`[data-message-id="${CSS.escape(String(messageId))}"]`);
      const target = el || chat.el.querySelector(`[data-turn="m${CSS.escape(String(messageId))}"]`);
      if (target) {
        target.scrollIntoView({ block: "center" });
        target.classList.add("flash");
        setTimeout(() => target.classList.remove("flash"), 2000);
      } else if (tries > 0) setTimeout(() => find(tries - 1), 150);
    };
    find(20);
  }

  // A chat's state changed (events, queue, connection): redraw what shows it, once per frame.
  chatChanged() {
    if (this.renderPending) return;
    this.renderPending = true;
    requestAnimationFrame(() => {
      this.renderPending = false;
      this.renderAll();
    });
  }

  // A session changed on the server (title, tokens): reload the list soon.
  sessionTouched(id, delay = 150) {
    clearTimeout(this.touchTimer);
    this.touchTimer = setTimeout(async () => {
      await this.sessionList.refresh();
      for (const chat of this.chats.values()) {
        const fresh = this.sessionList.find(chat.id);
        if (fresh) chat.session = fresh;
      }
      this.renderAll();
    }, delay);
  }

  renderAll() {
    const chat = this.active();
    renderTabs(this, $("#tabs"));
    if (!this.sessionList.editing) this.sessionList.render();
    renderQueue($("#queue"), chat);
    this.composer.setRunning(Boolean(chat && (chat.running !== null || chat.stream.connected)));
    $("#export").hidden = !(this.features.export && chat);
    this.renderUsage(chat);
  }

  renderUsage(chat) {
    const box = $("#usage");
    if (!chat) {
      box.replaceChildren();
      return;
    }
    const parts = [];
    const context = chat.usage && chat.usage.context;
    if (context && context.limit) {
      const share = Math.min(1, context.tokens / context.limit);
      const meter = h("span", { class: share > 0.85 ? "meter hot" : "meter", title: `${Math.round(share * 100)}% of the context window` }, h("span", { class: "meter-fill" }));
      meter.firstChild.style.width = `${(share * 100).toFixed(1)}%`;
      parts.push(h("span", { class: "usage-context" }, "Context ", meter, ` ${formatTokens(context.tokens)} / ${formatTokens(context.limit)}`));
    } else if (context && context.tokens) {
      parts.push(h("span", { class: "usage-context" }, `Context ${formatTokens(context.tokens)} tokens`));
    }
    if (chat.usage && chat.usage.usage) {
      const u = chat.usage.usage;
      const cached = u.cached_tokens ? ` (${formatTokens(u.cached_tokens)} cached)` : "";
      parts.push(h("span", {}, `Last turn ${formatTokens(u.prompt_tokens)} in${cached} · ${formatTokens(u.completion_tokens)} out`));
    }
    const session = this.sessionList.find(chat.id) || chat.session;
    if (session && session.total_tokens) parts.push(h("span", {}, `Session ${formatTokens(session.total_tokens)} tokens`));
    box.replaceChildren(...parts);
  }
}

new App().start();
