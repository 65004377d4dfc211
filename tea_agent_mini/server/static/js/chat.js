// A session's conversation: its log element (kept while other sessions are shown, so background
// turns keep streaming into it), its turns, its queue and its usage. The app shows one at a time.
import { h, toast } from "./dom.js";
import { buildTurns, runningTurnStart, userParts } from "./history.js";
import { TurnView } from "./turnview.js";
import { SessionStream } from "./streams.js";
import { addFeedback, loadRatings } from "./feedback.js";

const HISTORY_LIMIT = 400; // messages a page of history holds (the server allows up to 1000)
const STICK_PIXELS = 80;

export class ChatView {
  constructor(app, session) {
    this.app = app;
    this.api = app.api;
    this.id = session.id;
    this.session = session;
    this.turns = new Map();
    this.pending = new Map(); // turn id -> {text, images, names} of messages sent from this page
    this.running = null;
    this.queue = [];
    this.usage = null; // the last done event: {usage, context}
    this.ready = Promise.resolve(); // the app sets it to load()
    this.stick = true;
    this.inner = h("div", { class: "chat-inner" });
    this.empty = h(
      "div",
      { class: "empty-state" },
      h("img", { class: "empty-logo", src: "/static/favicon.svg", alt: "", width: 48, height: 48 }),
      h("h2", {}, "How can I help?"),
      h("p", {}, "Enter sends · Shift+Enter adds a line · Esc stops"),
    );
    this.earliest = null; // the id of the oldest message shown, the cursor for the page before
    this.earlier = h("button", { type: "button", class: "btn small", onclick: () => this.loadEarlier() }, "Load earlier messages");
    this.earlierRow = h("div", { class: "load-earlier", hidden: true }, this.earlier);
    this.origin = h("div", { class: "chat-origin", hidden: true }); // a subagent's session: whose it is
    this.el = h("div", { class: "chat-log", role: "log", dataset: { session: this.id } }, this.empty, this.origin, this.earlierRow, this.inner);
    this.el.addEventListener("scroll", () => {
      const el = this.el;
      this.stick = el.scrollHeight - el.scrollTop - el.clientHeight < STICK_PIXELS;
    });
    new MutationObserver(() => this.afterChange()).observe(this.inner, { childList: true, subtree: true, characterData: true });
    this.stream = new SessionStream(this.api, this.id, {
      event: (event) => this.onEvent(event),
      connected: () => this.app.chatChanged(this),
      ended: (latest, error) => this.onEnded(latest, error),
    });
  }

  get busy() {
    return this.running !== null || this.queue.length > 0 || this.stream.connected;
  }

  afterChange() {
    this.empty.hidden = this.inner.childElementCount > 0;
    if (this.stick) this.el.scrollTop = this.el.scrollHeight;
  }

  scrollToEnd() {
    this.stick = true;
    this.el.scrollTop = this.el.scrollHeight;
  }

  // A page of stored messages that starts at a user message (the rest of a turn cut by the page
  // comes with the page before it), and where the page before it ends.
  async historyPage(before = null) {
    const cursor = before === null ? "" : `&before=${before}`;
    const page = await this.api.get(`/v1/sessions/${this.id}/messages?limit=${HISTORY_LIMIT}${cursor}`);
    let stored = page.data;
    const start = stored.findIndex((message) => message.role === "user");
    if (page.has_more && start > 0) stored = stored.slice(start);
    this.earliest = stored.length ? stored[0].id : before;
    this.earlierRow.hidden = !page.has_more;
    return stored;
  }

  async loadEarlier() {
    if (this.earliest === null) return;
    this.earlier.disabled = true;
    try {
      const stored = await this.historyPage(this.earliest);
      const height = this.el.scrollHeight;
      this.stick = false;
      this.inner.prepend(...this.storedTurns(stored));
      this.el.scrollTop += this.el.scrollHeight - height; // keep what was on screen in place
    } catch (error) {
      toast(`Could not load earlier messages: ${error.message}`, "error", 6000);
    } finally {
      this.earlier.disabled = false;
    }
  }

  // The elements of stored turns, each finished answer with its 👍/👎 (the ratings load after).
  storedTurns(messages) {
    const views = buildTurns(messages);
    for (const view of views) addFeedback(this, view);
    loadRatings(this);
    return views.map((view) => view.el);
  }

  async load() {
    const [stored, session] = await Promise.all([this.historyPage(), this.api.get(`/v1/sessions/${this.id}`)]);
    this.session = session;
    this.origin.hidden = !session.parent_id;
    if (session.parent_id) {
      this.origin.replaceChildren(`Subagent ${session.agent || ""} · `, h("a", { href: "#", dataset: { session: session.parent_id } }, "open the conversation that started it"));
    }
    let queue = { running: null, data: [] };
    if (session.busy) queue = await this.api.get(`/v1/sessions/${this.id}/queue`);
    this.queue = queue.data;
    const cut = runningTurnStart(stored, queue.running);
    const finished = cut >= 0 ? stored.slice(0, cut) : stored;
    this.inner.replaceChildren(...this.storedTurns(finished));
    if (queue.running) {
      // the running turn is replayed from its events; its user message comes from the store
      const view = this.viewFor(queue.running.id);
      if (cut >= 0) {
        const parts = userParts(stored[cut].content);
        view.setUser(parts.text, parts.images, stored[cut].id, parts.files);
      }
    }
    this.afterChange();
    this.scrollToEnd();
    if (session.busy) {
      const marks = this.stream.marks;
      // the page is new: replay the running turn from its start (or what came after the last
      // event seen when no turn is running yet)
      let since = marks.last;
      if (queue.running) since = marks.turn === queue.running.id ? marks.base : null;
      this.stream.resume(since);
    }
    this.app.chatChanged(this);
  }

  viewFor(turnId, { text = "", create = true } = {}) {
    let view = this.turns.get(turnId);
    if (!view && create) {
      view = new TurnView(turnId, { answer: (id, text) => this.answerQuestion(id, text) });
      const mine = this.pending.get(turnId);
      if (mine) view.setUser(mine.text, mine.images, null, mine.names);
      else if (text) view.setUser(text);
      this.turns.set(turnId, view);
      this.inner.append(view.el);
    }
    return view;
  }

  onEvent(event) {
    const data = event.data || {};
    const turn = data.turn || "";
    switch (event.event) {
      case "queued":
        this.refreshQueue();
        return;
      case "start":
        this.running = turn;
        this.queue = this.queue.filter((item) => item.id !== turn);
        {
          const view = this.viewFor(turn, { text: data.text });
          if (!view.user && data.text) view.setUser(data.text); // re-attached before it was stored
          view.apply(event);
        }
        this.refreshQueue();
        break;
      case "error": {
        const view = this.viewFor(turn, { create: turn === this.running });
        if (view) {
          view.apply(event);
          addFeedback(this, view);
        }
        if (turn === this.running) this.running = null;
        else this.refreshQueue(); // a queued message was cancelled
        break;
      }
      case "done":
        this.viewFor(turn).apply(event);
        addFeedback(this, this.viewFor(turn));
        this.usage = { usage: data.usage, context: data.context };
        if (turn === this.running) this.running = null;
        this.pending.delete(turn);
        this.app.sessionTouched(this.id);
        break;
      default:
        this.viewFor(turn).apply(event);
        if (this.running === null && turn) this.running = turn;
        if (event.event === "notice" && data.kind === "notify") this.app.notices.arrived(data);
    }
    this.app.chatChanged(this);
  }

  onEnded(latest, error) {
    if (error) toast(`Lost the connection to the server: ${error.message}`, "error", 8000);
    this.running = null;
    if (latest) {
      this.session = latest;
      this.queue = [];
    }
    for (const view of this.turns.values()) if (!view.finished) view.finish();
    this.app.chatChanged(this);
    this.app.sessionTouched(this.id);
  }

  async refreshQueue() {
    if (this.queueTimer) return;
    this.queueTimer = setTimeout(async () => {
      this.queueTimer = null;
      try {
        const queue = await this.api.get(`/v1/sessions/${this.id}/queue`);
        this.queue = queue.data;
      } catch {
        this.queue = [];
      }
      this.app.chatChanged(this);
    }, 60);
  }

  async cancelQueued(itemId) {
    await this.api.del(`/v1/sessions/${this.id}/queue/${itemId}`);
    this.queue = this.queue.filter((item) => item.id !== itemId).map((item, index) => ({ ...item, position: index + 1 }));
    this.app.chatChanged(this);
    this.refreshQueue();
  }

  // Send a message: it runs now, or waits in the queue while a turn is running.
  async send(text, { ids = [], images = [], names = [] } = {}) {
    const controller = new AbortController();
    const response = await this.api.fetch("POST", `/v1/sessions/${this.id}/messages`, {
      json: { content: text, attachments: ids },
      signal: controller.signal,
    });
    const turn = response.headers.get("X-Turn-Id");
    if (turn) this.pending.set(turn, { text, images, names });
    this.app.sessionTouched(this.id, 0); // the first message names the session
    this.scrollToEnd();
    const first = await this.stream.adopt(response, controller);
    if (first && first.event === "queued") this.refreshQueue();
    return first;
  }

  answerQuestion(questionId, text) {
    return this.api.post(`/v1/sessions/${this.id}/questions/${encodeURIComponent(questionId)}`, { answer: text });
  }

  async stop() {
    if (this.running === null && !this.stream.connected) return false;
    const result = await this.api.post(`/v1/sessions/${this.id}/abort`);
    return result.aborted;
  }

  close() {
    this.stream.close();
    this.el.remove();
  }
}
