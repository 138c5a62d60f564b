// @ts-check
// freelook: the browser's end of the link to the operator station, shared by the cockpit and
// the virtual operator station. The launch's access token arrives once as ?token=…; it is kept
// for this tab in sessionStorage and taken out of the address bar (no token in history,
// bookmarks or screenshots). One binary WebSocket carries everything; it reconnects on its own.

const TOKEN_KEY = "freelook-token:" + location.host;

function accessToken() {
  const params = new URLSearchParams(location.search);
  const given = params.get("token");
  if (given) {
    sessionStorage.setItem(TOKEN_KEY, given);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
    return given;
  }
  return sessionStorage.getItem(TOKEN_KEY) || "";
}
const token = accessToken();

/**
 * @typedef {object} LinkHandlers
 * @property {(ws: WebSocket) => void} onOpen
 * @property {(refused: boolean) => void} onClose
 * @property {(data: ArrayBuffer) => void} onMessage
 */

/**
 * The socket to the server, opened again after it closes: a refusal (code 4403: a stale token
 * after freelook restarted, or a foreign page) retries after 5 s, else after 1 s. Each new
 * socket is handed to onOpen.
 * @param {LinkHandlers} handlers
 * @returns {WebSocket}
 */
export function connect(handlers) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws?token=${encodeURIComponent(token)}`);
  ws.binaryType = "arraybuffer";
  ws.onopen = () => handlers.onOpen(ws);
  ws.onclose = (ev) => {
    const refused = ev.code === 4403;
    handlers.onClose(refused);
    setTimeout(() => connect(handlers), refused ? 5000 : 1000);
  };
  ws.onmessage = (ev) => handlers.onMessage(ev.data);
  return ws;
}

/**
 * A JSON message to the server, or nothing while the socket is not open.
 * @param {WebSocket | null} ws
 * @param {object} obj
 */
export function sendJson(ws, obj) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj));
}
