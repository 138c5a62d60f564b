// freelook station: JPEG decoding off the page's main thread (a dedicated worker), so that
// drawing the room does not hold up the camera frames. In: {id, bytes}; out: {id, bitmap}.
self.onmessage = async (ev) => {
  const { id, bytes } = ev.data;
  try {
    const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/jpeg" }));
    self.postMessage({ id, bitmap }, [bitmap]);
  } catch (err) {
    self.postMessage({ id, error: String(err) });
  }
};
