// @ts-check
// freelook cockpit: the picture moved to the prediction, drawn by the page's compositor. The
// picture is kept on two layers under the camera canvas, its sky (the rows at or above the
// horizon, moved by the heading's change) and its ground (below it, moved as the ground plane
// is), and each is shown through its homography (reprojection.js) as a CSS transform. The
// compositor maps and filters the layers on its own thread, so moving the picture to a newer
// prediction costs the page two style changes, never a pass over its pixels; a new picture costs
// one copy of it. Black where nothing maps (what the camera did not see).

import { cssTransform, skyRows } from "./reprojection.js";

/** @typedef {import("./reprojection.js").Warp} Warp */
/** A layer: its canvas, drawn on, and the transform it was last given.
 * @typedef {{ canvas: HTMLCanvasElement, ctx: CanvasRenderingContext2D, transform: string }} Layer */

export class PictureLayers {
  /**
   * @param {HTMLElement} box the layers' box, under ``over`` in the same pane
   * @param {HTMLCanvasElement} over the camera canvas, shown with ``object-fit: contain``: the
   *   layers fill its picture's box, so what is drawn on it lies where the picture shows
   */
  constructor(box, over) {
    this.box = box;
    this.over = over;
    this.sky = this.layer();
    this.ground = this.layer();
    /** the picture and split the layers hold: a new picture, or a new split, copies it again */
    this.held = { picture: -1, rows: -1 };
    /** the picture's size (px), which the box takes */
    this.size = { width: 0, height: 0 };
    this.shown = false;
    new ResizeObserver(() => this.fit()).observe(over);
  }

  /** @returns {Layer} */
  layer() {
    const canvas = document.createElement("canvas");
    canvas.className = "picture-layer";
    this.box.append(canvas);
    return { canvas, ctx: /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d", { alpha: false })), transform: "" };
  }

  /**
   * ``source`` (picture number ``picture``) moved by ``warp``: copied onto the layers when it or
   * its horizon's row is new, then each layer's transform set.
   * @param {HTMLCanvasElement} source @param {number} picture @param {Warp} warp
   */
  show(source, picture, warp) {
    const w = source.width, h = source.height, rows = skyRows(warp, h);
    if (this.held.picture !== picture || this.held.rows !== rows) {
      if (this.size.width !== w || this.size.height !== h) {
        this.size = { width: w, height: h };
        this.box.style.width = `${w}px`; this.box.style.height = `${h}px`;
        this.fit();
      }
      this.copy(this.sky, source, 0, rows);
      this.copy(this.ground, source, rows, h);
      this.held = { picture, rows };
    }
    this.place(this.sky, cssTransform(warp.rotation));
    this.place(this.ground, cssTransform(warp.ground, rows));
    if (!this.shown) { this.box.style.visibility = "visible"; this.shown = true; }
  }

  /**
   * A layer's transform, set only when it changes (a picture with no newer prediction stays).
   * @param {Layer} layer @param {string} transform
   */
  place(layer, transform) {
    if (layer.transform !== transform) { layer.canvas.style.transform = transform; layer.transform = transform; }
  }

  /** The layers out of sight (the raw frame is on the camera canvas). */
  hide() {
    if (this.shown) { this.box.style.visibility = "hidden"; this.shown = false; }
  }

  /**
   * Rows ``top`` to ``bottom`` of ``source`` on a layer of their size (the compositor draws
   * no more than the picture's area in all).
   * @param {Layer} layer @param {HTMLCanvasElement} source @param {number} top @param {number} bottom
   */
  copy({ canvas, ctx }, source, top, bottom) {
    const w = source.width, rows = bottom - top;
    if (canvas.width !== w || canvas.height !== rows) { canvas.width = w; canvas.height = rows; }
    if (rows > 0) ctx.drawImage(source, 0, top, w, rows, 0, 0, w, rows);
  }

  /** The box on the camera canvas's picture: where ``object-fit: contain`` shows it, at its scale. */
  fit() {
    const over = this.over, { width: w, height: h } = this.size;
    if (!(w > 0 && h > 0)) return;
    const k = Math.min(over.clientWidth / w, over.clientHeight / h);
    const x = over.offsetLeft + (over.clientWidth - k * w) / 2, y = over.offsetTop + (over.clientHeight - k * h) / 2;
    this.box.style.transform = `translate(${x}px, ${y}px) scale(${k})`;
  }
}
