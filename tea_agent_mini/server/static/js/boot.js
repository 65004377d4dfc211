// Runs before the first paint (a classic script in <head>) so a dark theme never flashes light.
(function () {
  try {
    var theme = JSON.parse(localStorage.getItem("tea.theme") || "null");
    var accent = JSON.parse(localStorage.getItem("tea.accent") || "null");
    var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    document.documentElement.dataset.theme = theme || (dark ? "dark" : "light");
    if (accent) document.documentElement.style.setProperty("--accent", accent);
  } catch (e) {
    document.documentElement.dataset.theme = "light";
  }
})();
