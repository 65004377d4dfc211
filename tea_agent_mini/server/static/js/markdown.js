// Markdown for model output: marked renders, DOMPurify sanitizes, then code blocks get a copy
// button. Raw HTML in the output is shown as text (what the model wrote), and nothing the model
// writes reaches innerHTML without passing DOMPurify as well.
import { Marked } from "../vendor/marked.esm.min.js";
import "../vendor/purify.min.js";
import { h, icon } from "./dom.js";

const purify = globalThis.DOMPurify;
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHTML = (text) => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
const parser = new Marked({ gfm: true, breaks: true, async: false });
parser.use({
  renderer: { html: (token) => (token.block ? `<p>${escapeHTML(token.text.trim())}</p>` : escapeHTML(token.text)) },
});
const SANITIZE = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "option"],
  FORBID_ATTR: ["style"],
};

let hooked = false;

function installHooks() {
  if (hooked) return;
  hooked = true;
  purify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A" && node.getAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

function sanitize(html) {
  installHooks();
  return purify.sanitize(html, SANITIZE);
}

export function renderMarkdown(el, text) {
  el.innerHTML = sanitize(parser.parse(text || ""));
  decorateCode(el);
}

function decorateCode(root) {
  for (const pre of root.querySelectorAll("pre")) {
    const code = pre.querySelector("code");
    const match = code && /language-([\w+#.-]+)/.exec(code.className);
    const bar = h(
      "div",
      { class: "code-bar" },
      h("span", { class: "code-lang" }, match ? match[1] : "text"),
      h(
        "button",
        { type: "button", class: "copy-btn", title: "Copy code", onclick: (e) => copyText(pre.innerText, e.currentTarget) },
        icon("copy"),
        h("span", {}, "Copy"),
      ),
    );
    const wrapper = h("div", { class: "code-block" });
    pre.replaceWith(wrapper);
    wrapper.append(bar, pre);
  }
}

async function copyText(text, button) {
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch {
    // no clipboard API outside a secure context (plain http on a LAN address): the old way
    const area = h("textarea", { class: "offscreen" });
    area.value = text;
    document.body.append(area);
    area.select();
    ok = document.execCommand("copy");
    area.remove();
  }
  if (button) {
    const label = button.querySelector("span:last-child");
    const before = label ? label.textContent : "";
    button.classList.add("done");
    if (label) label.textContent = ok ? "Copied" : "Copy failed";
    setTimeout(() => {
      button.classList.remove("done");
      if (label) label.textContent = before;
    }, 1500);
  }
  return ok;
}
