// Attachments of the message being written: each file is uploaded at once (POST /v1/uploads) and
// shown as a chip with a preview; the message then carries the upload ids. Images open large in a
// lightbox when clicked.
import { h, iconButton, toast } from "./dom.js";

export const ACCEPT = "image/png,image/jpeg,image/gif,image/webp,.txt,.md,.csv,.json,.pdf";

export function openLightbox(src, alt = "image") {
  const dialog = h("dialog", { class: "lightbox", "aria-label": "Image" }, h("img", { src, alt }));
  dialog.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

export class Attachments {
  constructor(api, container) {
    this.api = api;
    this.container = container;
    this.items = [];
  }

  get empty() {
    return this.items.length === 0;
  }

  addFiles(files) {
    for (const file of files) this.add(file);
  }

  add(file) {
    const isImage = file.type.startsWith("image/");
    const url = isImage ? URL.createObjectURL(file) : null;
    const item = { file, url, id: null, failed: false, el: null };
    const preview = isImage
      ? h("img", { src: url, alt: file.name, class: "chip-thumb", onclick: () => openLightbox(url, file.name) })
      : h("span", { class: "chip-file" }, "📎");
    item.el = h(
      "div",
      { class: "chip uploading", title: file.name },
      preview,
      h("span", { class: "chip-name" }, file.name),
      iconButton("x", `Remove ${file.name}`, () => this.remove(item)),
    );
    this.container.append(item.el);
    this.container.hidden = false;
    this.items.push(item);
    item.promise = this.api
      .upload(file)
      .then((saved) => {
        item.id = saved.id;
        item.el.classList.remove("uploading");
      })
      .catch((error) => {
        item.failed = true;
        item.el.classList.replace("uploading", "failed");
        toast(`${file.name}: ${error.message}`, "error", 6000);
      });
    return item;
  }

  remove(item) {
    this.items = this.items.filter((other) => other !== item);
    item.el.remove();
    if (item.url) URL.revokeObjectURL(item.url);
    this.container.hidden = this.items.length === 0;
  }

  // Wait for the uploads; {ids, images, names} of those that made it (names: the other files).
  async ready() {
    await Promise.all(this.items.map((item) => item.promise));
    const good = this.items.filter((item) => item.id);
    return {
      ids: good.map((item) => item.id),
      images: good.filter((item) => item.url).map((item) => item.url),
      names: good.filter((item) => !item.url).map((item) => item.file.name),
    };
  }

  // Forget the chips; the object URLs live on in the sent message's bubble.
  reset() {
    this.items = [];
    this.container.replaceChildren();
    this.container.hidden = true;
  }
}
