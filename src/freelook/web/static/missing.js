// @ts-check
// freelook pages: what to say when a module does not load. A page's main module is loaded by
// a <script type="module"> whose error event (fired when the module, or anything it imports,
// could not be fetched) calls explain(): it walks the module's static imports again, names the
// files the server does not have, and says so in a banner at the top of the page and in the
// page's status line, in place of a page that waits forever. cockpit.js asks missingFiles()
// the same about the arm's 3-D view, which it imports on demand.

const IMPORT = /(?:^|[;}\n])\s*(?:import|export)\s*(?:[\w$*{},\s]*?\bfrom\s*)?["']([^"']+)["']/g;

/** The page's import map (bare specifier → URL), as the browser resolves "three". */
function importMap() {
  const script = document.querySelector('script[type="importmap"]');
  try {
    return (script && JSON.parse(script.textContent).imports) || {};
  } catch {
    return {};
  }
}

/**
 * The files of ``url``'s static import graph the server does not send, each as its path and
 * why ("HTTP 404", or the network error); empty when every one of them arrives.
 * @param {string} url @returns {Promise<string[]>}
 */
export async function missingFiles(url) {
  const map = importMap();
  const seen = new Set();
  const missing = [];
  const visit = async (/** @type {string} */ href) => {
    if (seen.has(href)) return;
    seen.add(href);
    let text;
    try {
      const response = await fetch(href, { cache: "no-store" });
      if (!response.ok) {
        missing.push(`${new URL(href).pathname} (HTTP ${response.status})`);
        return;
      }
      text = await response.text();
    } catch (err) {
      missing.push(`${new URL(href).pathname} (${err})`);
      return;
    }
    const imports = [...text.matchAll(IMPORT)].map((m) => m[1]);
    await Promise.all(imports.map((spec) => visit(new URL(map[spec] || spec, href).href)));
  };
  await visit(new URL(url, location.href).href);
  return missing;
}

/**
 * Says on the page which files ``entry`` (a module URL) needs and the server does not have:
 * a banner at the top, and the text of the element ``statusId`` (the page's "connecting…").
 * @param {string} entry @param {string} [statusId]
 */
export async function explain(entry, statusId) {
  const missing = await missingFiles(entry);
  const what = missing.length ? `missing ${missing.join(", ")}` : `${entry} did not load`;
  const banner = document.createElement("div");
  banner.id = "missing-asset";
  banner.setAttribute("role", "alert");
  banner.style.cssText = "padding:10px 14px;background:#7a1010;color:#fff;font:14px sans-serif";
  banner.textContent = `This page cannot start: ${what}. The server's freelook installation is` +
    " incomplete: reinstall freelook.";
  document.body.prepend(banner);
  const status = statusId && document.getElementById(statusId);
  if (status) status.textContent = `cannot start: ${what}`;
}
