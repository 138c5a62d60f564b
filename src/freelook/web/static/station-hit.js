// @ts-check
// freelook station: Horizontal Image Translation (TAROS 2018 eqs. 1–4, docs/design.md §3), the
// same formulas as freelook.stereo in Python, and the image-analysis option (block matching of
// the two eyes).
// Pure functions: no DOM, no clock.

// d′ = X / (4 tan(φx/2)); p_max = L·d′ / (2 d_s); w′_s = w_s·d′ / d_s; p′_max = p_max·X_c / w′_s.
// X is both eyes' width (px), fovDeg one eye's horizontal field of view; null on bad input.
export function hit(X, fovDeg, ipd, screenDistance, screenWidth, cameraWidth) {
  const ok = [X, fovDeg, ipd, screenDistance, screenWidth, cameraWidth].every((v) => Number.isFinite(v) && v > 0);
  if (!ok || fovDeg >= 180) return null;
  const d = X / (4 * Math.tan((fovDeg * Math.PI) / 360));
  const pMax = (ipd * d) / (2 * screenDistance);
  const w = (screenWidth * d) / screenDistance;
  return { projection_distance: d, max_parallax: pMax, screen_width: w, camera_shift: (pMax * cameraWidth) / w };
}

// HIT from a rendered view: one eye's width (px), the projection matrix's [0] (1 / tan(φx/2)).
export function hitFromView(eyeWidth, projectionX, ipd, screenDistance, screenWidth, cameraWidth) {
  if (!(projectionX > 0)) return null;
  const fovDeg = (2 * Math.atan(1 / projectionX) * 180) / Math.PI;
  const out = hit(2 * eyeWidth, fovDeg, ipd, screenDistance, screenWidth, cameraWidth);
  return out && { ...out, X: 2 * eyeWidth, fov_deg: fovDeg, ipd, screen_distance: screenDistance, screen_width_m: screenWidth, camera_width: cameraWidth };
}

// Disparities (px, left column − right column) of the farthest (5th percentile) and nearest
// (95th) textured blocks of two grey images (Float32Array, w×h), searched in 0…maxD; null when
// nothing has texture. Mirrors freelook.stereo.disparities.
export function disparities(left, right, w, h, maxD, block = 8) {
  const rows = Math.floor(h / block), cols = Math.floor((w - maxD) / block);
  if (rows < 1 || cols < 1) return null;
  const found = [];
  const costs = new Float64Array(maxD + 1);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const x0 = maxD + c * block, y0 = r * block;
      let sum = 0, sum2 = 0;
      for (let y = y0; y < y0 + block; y++) for (let x = x0; x < x0 + block; x++) { const v = left[y * w + x]; sum += v; sum2 += v * v; }
      const n = block * block, mean = sum / n;
      if (Math.sqrt(Math.max(0, sum2 / n - mean * mean)) < 4) continue;
      for (let d = 0; d <= maxD; d++) {
        let cost = 0;
        for (let y = y0; y < y0 + block; y++) for (let x = x0; x < x0 + block; x++) cost += Math.abs(left[y * w + x] - right[y * w + x - d]);
        costs[d] = cost;
      }
      let best = 0;
      for (let d = 1; d <= maxD; d++) if (costs[d] < costs[best]) best = d;
      const sorted = Array.from(costs).sort((a, b) => a - b);
      const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
      if (costs[best] < 0.7 * median) found.push(best);
    }
  }
  if (!found.length) return null;
  found.sort((a, b) => a - b);
  const pct = (p) => {  // linear interpolation, as numpy.percentile
    const k = (found.length - 1) * p, lo = Math.floor(k), hi = Math.ceil(k);
    return found[lo] + (found[hi] - found[lo]) * (k - lo);
  };
  return { far: pct(0.05), near: pct(0.95), blocks: found.length };
}

// The largest outward shift keeping the farthest features from diverging: p′max + far/2 (≤ limit).
export function analysedShift(cameraShift, found, limit) {
  if (!found) return Math.min(cameraShift, limit);
  return Math.min(cameraShift + Math.max(found.far, 0) / 2, limit);
}
