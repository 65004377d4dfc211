// The bell in the top bar: notices saved for the user (toolkit_notify without a desktop, finished
// scheduled tasks), from GET /v1/notices. It counts those newer than the last time the list was
// opened. A notice that arrives in a running turn shows as a toast at once, once per tab.
import { h, modal, toast } from "./dom.js";
import { listOf } from "./features.js";
import { prefs, tabState } from "./prefs.js";

const REFRESH_MS = 60_000;
const LIMIT = 50;
const TOASTED_KEPT = 50;

function when(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export class NoticeBell {
  constructor(app, button) {
    this.app = app;
    this.button = button;
    this.badge = h("span", { class: "badge", hidden: true });
    this.notices = [];
    this.soon = null;
  }

  start() {
    if (!this.app.features.notices) return;
    this.button.append(this.badge);
    this.button.hidden = false;
    this.button.addEventListener("click", () => this.open());
    this.refresh();
    setInterval(() => this.refresh(), REFRESH_MS);
  }

  get unread() {
    const seen = prefs.get("noticesSeen", "");
    return this.notices.filter((notice) => notice.time > seen).length;
  }

  async refresh() {
    try {
      this.notices = listOf(await this.app.api.get(`/v1/notices?limit=${LIMIT}`));
    } catch {
      return; // the count waits for the next refresh
    }
    this.render();
  }

  render() {
    const count = this.unread;
    this.badge.hidden = count === 0;
    this.badge.textContent = count > 9 ? "9+" : String(count);
    this.button.title = count ? `Notices (${count} new)` : "Notices";
  }

  // A `notice` event of kind `notify` from a running turn.
  arrived({ title, message, urgency, time }) {
    const key = `${time}|${title}|${message}`;
    const toasted = tabState.get("noticesToasted", []);
    if (!toasted.includes(key)) {
      toast(title ? `${title}: ${message}` : message, urgency === "critical" ? "error" : "info", 8000);
      tabState.set("noticesToasted", [...toasted, key].slice(-TOASTED_KEPT));
    }
    if (!this.button.hidden) {
      clearTimeout(this.soon);
      this.soon = setTimeout(() => this.refresh(), 300);
    }
  }

  open() {
    const dialog = modal("Notices");
    const list = h("ul", { class: "panel-list notice-list" });
    const seen = prefs.get("noticesSeen", "");
    for (const notice of this.notices) {
      const link = notice.session_id
        ? h("button", { type: "button", class: "btn small", onclick: () => { dialog.close(); this.app.openSession(notice.session_id); } }, notice.session_title || "Open the session")
        : null;
      list.append(
        h(
          "li",
          { class: `panel-item notice-item ${notice.urgency}${notice.time > seen ? " unread" : ""}` },
          h("div", { class: "panel-text" }, h("strong", {}, notice.title), h("div", {}, notice.message), h("small", { class: "muted" }, when(notice.time))),
          link,
        ),
      );
    }
    if (!this.notices.length) list.append(h("li", { class: "list-empty" }, "No notices yet."));
    dialog.body.append(list);
    if (this.notices.length) prefs.set("noticesSeen", this.notices[0].time);
    this.render();
  }
}
