// The active session's message queue, above the composer: position, text, a cancel button.
import { h, iconButton, toast } from "./dom.js";

export function renderQueue(container, chat) {
  const items = chat ? chat.queue : [];
  // redrawn only when it changed: a redraw under the pointer would swallow the click
  const signature = JSON.stringify([chat && chat.id, items.map((i) => [i.id, i.position])]);
  if (container.signature === signature) return;
  container.signature = signature;
  container.hidden = items.length === 0;
  if (!items.length) {
    container.replaceChildren();
    return;
  }
  const rows = items.map((item) =>
    h(
      "li",
      { class: "queue-item", dataset: { id: item.id } },
      h("span", { class: "queue-pos", title: "position in the queue" }, `#${item.position}`),
      h("span", { class: "queue-text" }, item.text || (item.attachments ? `${item.attachments} attachment(s)` : "")),
      iconButton("x", "Cancel this queued message", async () => {
        try {
          await chat.cancelQueued(item.id);
        } catch (error) {
          toast(`Could not cancel: ${error.message}`, "error");
          chat.refreshQueue();
        }
      }),
    ),
  );
  container.replaceChildren(
    h("div", { class: "queue-head" }, `Queued (${items.length}) — runs when the current answer is done`),
    h("ol", { class: "queue-list" }, rows),
  );
}
