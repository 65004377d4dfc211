// What the browser remembers. localStorage: theme, accent, API key (shared by every tab).
// sessionStorage: this tab's open sessions and the last event id per session (a reload resumes).

const PREFIX = "tea.";

function read(storage, key, fallback) {
  try {
    const raw = storage.getItem(PREFIX + key);
    return raw === null ? fallback : JSON.parse(raw);
  } catch {
    return fallback;
  }
}

function write(storage, key, value) {
  try {
    if (value === undefined || value === null) storage.removeItem(PREFIX + key);
    else storage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // private mode or a full quota: the UI still works, it just forgets
  }
}

export const prefs = {
  get: (key, fallback = null) => read(localStorage, key, fallback),
  set: (key, value) => write(localStorage, key, value),
};

export const tabState = {
  get: (key, fallback = null) => read(sessionStorage, key, fallback),
  set: (key, value) => write(sessionStorage, key, value),
};

// {turn, base, last}: the turn being shown, the event id just before it, the last id seen.
export const eventMarks = {
  get: (sessionId) => tabState.get(`events.${sessionId}`, null),
  set: (sessionId, marks) => tabState.set(`events.${sessionId}`, marks),
  drop: (sessionId) => tabState.set(`events.${sessionId}`, null),
};

export const DEFAULT_ACCENT = "#3b82f6";

export function applyTheme() {
  const root = document.documentElement;
  const stored = prefs.get("theme");
  const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  root.dataset.theme = stored || (dark ? "dark" : "light");
  root.style.setProperty("--accent", prefs.get("accent", DEFAULT_ACCENT));
}

export function setTheme(theme) {
  prefs.set("theme", theme);
  applyTheme();
  document.dispatchEvent(new CustomEvent("themechange"));
}

export function setAccent(color) {
  prefs.set("accent", color);
  applyTheme();
}
