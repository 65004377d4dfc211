// 👍/👎 under a finished answer, with an optional comment (POST /v1/sessions/{id}/feedback). The
// rating given earlier comes back from GET /v1/evaluations?session_id= when the session loads.
import { h, icon, toast } from "./dom.js";
import { userParts } from "./history.js";

const THUMBS = { good: "Good answer", bad: "Bad answer" };

function show(bar, rating, comment) {
  bar.dataset.rating = rating || "";
  for (const button of bar.querySelectorAll(".rate-btn")) button.setAttribute("aria-pressed", String(button.dataset.rating === rating));
  bar.querySelector(".rate-note").textContent = comment ? `“${comment}”` : "";
}

// The id of the turn's user message: known for stored turns; for one sent from this page, the
// stored user message at the same place from the end (the turns after it are stored after it).
async function messageIdOf(chat, view) {
  if (view.messageId) return view.messageId;
  const turns = [...chat.inner.querySelectorAll(":scope > .turn")];
  const after = turns.length - 1 - turns.indexOf(view.el);
  const page = await chat.api.get(`/v1/sessions/${chat.id}/messages?limit=200`);
  const users = page.data.filter((m) => m.role === "user");
  const found = users[users.length - 1 - after];
  // startsWith: a turn started elsewhere shows the first 200 characters of its message
  if (!found || !userParts(found.content).text.startsWith(view.userText || "")) throw new Error("This answer is not stored yet.");
  return (view.messageId = found.id);
}

export function addFeedback(chat, view) {
  if (!view.answer || !view.user || view.answer.querySelector(".rate") || !chat.app.features.has("/v1/sessions/{id}/feedback", "post")) return;
  const comment = h("input", { type: "text", maxlength: 2000, "aria-label": "Comment", placeholder: "" });
  const form = h("form", { class: "rate-form row", hidden: true }, comment, h("button", { type: "submit", class: "btn small primary" }, "Send"), h("button", { type: "button", class: "btn small", onclick: () => close() }, "Cancel"));
  const bar = h("div", { class: "rate" });
  const close = () => {
    form.hidden = true;
    show(bar, bar.dataset.rating, bar.dataset.comment);
  };
  const pick = (rating) => {
    for (const button of bar.querySelectorAll(".rate-btn")) button.setAttribute("aria-pressed", String(button.dataset.rating === rating));
    form.dataset.rating = rating;
    comment.placeholder = rating === "bad" ? "What went wrong? (optional)" : "What was good? (optional)";
    form.hidden = false;
    comment.focus();
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { rating: form.dataset.rating };
    if (comment.value.trim()) body.comment = comment.value.trim();
    try {
      body.message_id = await messageIdOf(chat, view);
      const rated = await chat.api.post(`/v1/sessions/${chat.id}/feedback`, body);
      bar.dataset.comment = rated.comment || "";
      show(bar, rated.rating, rated.comment);
      form.hidden = true;
      comment.value = "";
    } catch (error) {
      toast(error.message, "error", 6000);
    }
  });
  const buttons = Object.entries(THUMBS).map(([rating, label]) =>
    h("button", { type: "button", class: "rate-btn", title: label, "aria-label": label, "aria-pressed": "false", dataset: { rating }, onclick: () => pick(rating) }, icon(rating)),
  );
  bar.append(...buttons, h("span", { class: "rate-note" }), form);
  view.answer.append(bar);
}

// Show the ratings stored for the session's turns on screen.
export async function loadRatings(chat) {
  if (!chat.app.features.has("/v1/evaluations")) return;
  try {
    const page = await chat.api.get(`/v1/evaluations?session_id=${encodeURIComponent(chat.id)}&limit=200`);
    for (const evaluation of page.data) {
      const bar = evaluation.rating && chat.inner.querySelector(`.turn[data-turn="m${evaluation.message_id}"] .rate`);
      if (bar) {
        bar.dataset.comment = evaluation.comment || "";
        show(bar, evaluation.rating, evaluation.comment);
      }
    }
  } catch {
    // ratings are a nicety: the conversation shows without them
  }
}
