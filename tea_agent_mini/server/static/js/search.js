// The global search dialog (Ctrl+K): GET /v1/search?q= finds sessions by title and messages by
// text; other kinds the server adds (memories, tasks) are listed too.
import { h, modal, debounce, relativeTime } from "./dom.js";
import { sessionTitle } from "./sessions.js";

const KNOWN = new Set(["query", "sessions", "messages"]);

function group(title, rows) {
  if (!rows.length) return null;
  return h("section", { class: "search-group" }, h("h3", {}, title), h("ul", { class: "search-list" }, rows));
}

function otherLabel(item) {
  return item.content || item.name || item.title || item.snippet || item.prompt || item.command || JSON.stringify(item);
}

export function openSearch(app) {
  const input = h("input", { type: "search", class: "search-input", placeholder: "Search sessions and messages…", "aria-label": "Search", autocomplete: "off" });
  const results = h("div", { class: "search-results", "aria-live": "polite" });
  const dialog = modal("Search", { wide: true });
  dialog.dialog.classList.add("search-dialog");
  dialog.body.append(input, results);
  let latest = 0;

  const go = async (sessionId, messageId) => {
    dialog.close();
    await app.openSession(sessionId);
    if (messageId) app.highlightMessage(sessionId, messageId);
  };

  const run = debounce(async () => {
    const query = input.value.trim();
    const ticket = ++latest;
    if (!query) {
      results.replaceChildren();
      return;
    }
    let found;
    try {
      found = await app.api.get(`/v1/search?q=${encodeURIComponent(query)}&limit=30`);
    } catch (error) {
      results.replaceChildren(h("p", { class: "form-error" }, error.message));
      return;
    }
    if (ticket !== latest) return;
    const titles = new Map(found.sessions.map((s) => [s.id, sessionTitle(s)]));
    const sessions = found.sessions.map((s) =>
      h("li", {}, h("button", { type: "button", class: "search-hit", onclick: () => go(s.id) }, h("strong", {}, sessionTitle(s)), h("small", {}, relativeTime(s.updated)))),
    );
    // each hit names its session (older servers send no session_title: the sessions found)
    const messages = found.messages.map((m) =>
      h(
        "li",
        {},
        h(
          "button",
          { type: "button", class: "search-hit", onclick: () => go(m.session_id, m.id) },
          h("span", { class: "hit-role" }, m.role),
          h(
            "span",
            { class: "hit-snippet" },
            m.snippet,
            h("span", { class: "hit-session" }, `in “${m.session_title || titles.get(m.session_id) || "New chat"}”`),
          ),
          h("small", {}, relativeTime(m.created)),
        ),
      ),
    );
    const extra = Object.entries(found)
      .filter(([key, value]) => !KNOWN.has(key) && Array.isArray(value))
      .map(([key, value]) => group(key[0].toUpperCase() + key.slice(1), value.map((item) => h("li", { class: "search-other" }, otherLabel(item)))));
    const groups = [group("Sessions", sessions), group("Messages", messages), ...extra].filter(Boolean);
    results.replaceChildren(...(groups.length ? groups : [h("p", { class: "muted" }, `Nothing found for “${query}”.`)]));
  }, 200);

  input.addEventListener("input", run);
  input.focus();
  return dialog;
}
