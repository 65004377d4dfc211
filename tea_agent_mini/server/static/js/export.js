// Export of the shown session (when the server has /v1/export/...): Markdown or PDF, the final
// answers only or the full trajectory with tool calls. Downloaded through fetch so the API key
// goes along.
import { h, modal, toast } from "./dom.js";
import { fillPath } from "./features.js";

const FORMATS = [
  ["md", "Markdown", "md"],
  ["pdf", "PDF", "pdf"],
];
const MODES = [
  ["latest", "The last question and answer"],
  ["answers", "Every question with its final answer"],
  ["full", "Everything, with reasoning and tool calls"],
];

export function openExport(app, sessionId) {
  const dialog = modal("Export this session");
  const modes = MODES.map(([mode, label], index) =>
    h("label", { class: "check" }, h("input", { type: "radio", name: "export-mode", value: mode, checked: index === 0 }), label),
  );
  const buttons = [];
  for (const [format, label, extension] of FORMATS) {
    const template = app.features.exportPath(format);
    if (!template) continue;
    const onclick = async () => {
      const mode = dialog.body.querySelector("input[name=export-mode]:checked").value;
      try {
        const name = await app.api.download(`${fillPath(template, sessionId)}?mode=${mode}`, `session.${extension}`);
        toast(`Saved ${name}`, "ok");
        dialog.close();
      } catch (error) {
        toast(error.message, "error", 6000);
      }
    };
    buttons.push(h("button", { type: "button", class: "btn primary", dataset: { format }, onclick }, `Download ${label}`));
  }
  dialog.body.append(h("div", { class: "export-modes" }, modes), h("div", { class: "row end" }, buttons));
  return dialog;
}
