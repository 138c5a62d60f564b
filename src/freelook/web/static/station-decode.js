// @ts-check
// freelook station: JPEG decoding off the page's main thread (a dedicated worker), so that
// drawing the room does not hold up the camera frames. In: {id, bytes}; out: {id, bitmap}.
/** @type {{ onmessage: ((ev: MessageEvent) => void) | null, postMessage(message: any, transfer?: Transferable[]): void }} */
const scope = /** @type {any} */ (self);  // a worker's global scope (TypeScript's DOM types name it Window)
scope.onmessage = async (ev) => {
  const { id, bytes } = ev.data;
  try {
    const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/jpeg" }));
    scope.postMessage({ id, bitmap }, [bitmap]);
  } catch (err) {
    scope.postMessage({ id, error: String(err) });
  }
};
