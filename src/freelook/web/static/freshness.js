// @ts-check
// freelook cockpit: how old is what the page shows? The server stamps each state with the age of
// the robot's newest report (its own clock); the page adds how long ago it took that state in,
// and how far behind it takes messages in: a ping through the same socket comes back behind
// everything queued before it, so its round trip is the page's own delay (no clocks compared).
// Telemetry older than STALE_S marks the header and the view stale; a page that takes its
// messages in, runs its timers or paints late says it is behind. Pure: times (ms, the page's
// performance.now()) are passed in, so node's test runner checks it (tests/js/).

export const STALE_S = 0.5;  // telemetry older than this is shown stale
export const BEHIND_S = 0.3;  // a page this far behind says so
export const BEHIND_HOLD_MS = 3000;  // ... for this long after it last fell behind
export const PING_MS = 250;
export const NO_VIDEO_MS = 3000;
export const TICK_MS = 50;  // the freshness timer's period

/**
 * What the page knows of its own delays (ms). pingSent: when the ping in flight left, 0 when
 * none is; rtt: the last round trip; stateAt: when the newest state came in; stall: how late the
 * last timer tick came; behindAt / behindBy: when the page last fell behind, and by how much (s);
 * clock: the station clock's lead over the page's (s) by the newest pongs (notePong).
 * @typedef {{ pingSent: number, pingAt: number, rtt: number, stateAt: number, stall: number,
 *             tickAt: number, behindAt: number, behindBy: number,
 *             clock: { lead: number, rtt: number }[] }} Fresh
 */

/** @returns {Fresh} */
export function newFresh() {
  return {
    pingSent: 0, pingAt: 0, rtt: 0, stateAt: 0, stall: 0, tickAt: 0, behindAt: -1e9, behindBy: 0,
    clock: [],
  };
}

/** How long a message takes to reach the page now (ms): the last round trip, or longer while a
 * ping is out for longer.
 * @param {Fresh} fresh @param {number} now */
export function delivery(fresh, now) {
  return fresh.pingSent ? Math.max(fresh.rtt, now - fresh.pingSent) : fresh.rtt;
}

/**
 * The age (s) of the robot's report the page shows: its age when the server sent it, plus its
 * time since it came in and its delivery. Infinity when there is none.
 * @param {number | null | undefined} reportAge the state's "age" (s)
 * @param {Fresh} fresh @param {number} now
 */
export function telemetryAge(reportAge, fresh, now) {
  if (reportAge === null || reportAge === undefined || !fresh.stateAt) return Infinity;
  return reportAge + (now - fresh.stateAt + delivery(fresh, now)) / 1000;
}

/**
 * How far behind (s) the page is: the longest of its delivery, its last timer stall, an
 * animation frame asked for and not come yet, and the last paint's delay (while recent).
 * @param {Fresh} fresh @param {number} now
 * @param {{ requested: number, paintedAt: number, delay: number }} paint requested: when the
 *   pending animation frame was asked for, 0 when none is; paintedAt, delay: the last paint's
 */
export function pageDelay(fresh, now, paint) {
  const painting = paint.requested ? now - paint.requested : 0;
  const lastPaint = now - paint.paintedAt < 3000 ? paint.delay : 0;
  return Math.max(delivery(fresh, now), fresh.stall, painting, lastPaint) / 1000;
}

/**
 * Notes how far behind the page is now, and whether it says so: for BEHIND_HOLD_MS after it
 * last fell behind, with the most it fell behind meanwhile (fresh.behindBy).
 * @param {Fresh} fresh @param {number} behind (s) @param {number} now
 */
export function noteBehind(fresh, behind, now) {
  if (behind > BEHIND_S) {
    if (now - fresh.behindAt > BEHIND_HOLD_MS) fresh.behindBy = 0;
    fresh.behindBy = Math.max(fresh.behindBy, behind);
    fresh.behindAt = now;
  }
  return now - fresh.behindAt < BEHIND_HOLD_MS;
}

/** Notes a timer tick at `now`: how late it came after the last one (fresh.stall).
 * @param {Fresh} fresh @param {number} now */
export function noteTick(fresh, now) {
  if (fresh.tickAt) {
    const late = now - fresh.tickAt - TICK_MS;
    fresh.stall = late > 0 ? late : 0;
  }
  fresh.tickAt = now;
}

/** Whether the page shows stale telemetry: connected, with a state, older than STALE_S.
 * @param {boolean} connected @param {boolean} hasState @param {number} age (s) */
export const isStale = (connected, hasState, age) => connected && hasState && age > STALE_S;

/** Whether the camera view is stale: the telemetry is, or no frame was painted for 2 × STALE_S.
 * @param {boolean} stale @param {number} framePaintedAt 0 before the first @param {number} now */
export const cameraStale = (stale, framePaintedAt, now) =>
  stale || (framePaintedAt > 0 && now - framePaintedAt > 1000 * STALE_S * 2);

/**
 * The link chip's text and class for a state's link report.
 * @param {{ session?: string, connected?: boolean }} link
 * @param {boolean} stale @param {number} age (s)
 * @returns {[string, string]}
 */
export function linkChip(link, stale, age) {
  if (link.session === "unanswered")  // requests unanswered: say so, not just "lost"
    return ["link: no answer to session request (wrong key or station id, or no robot there)", "bad"];
  if (!link.connected) return ["link: lost", "bad"];
  if (stale) return [`link: stale, ${Number.isFinite(age) ? age.toFixed(1) + " s" : "no report"} old`, "bad"];
  return ["link: up", "ok"];
}

/** Pongs the station's clock is judged by: the least delayed of the newest few. */
export const CLOCK_PONGS = 16;

/**
 * Notes a pong's station clock (`wire`, s): it was read half the ping's round trip before the
 * pong came in at `now`. The station clock's lead over the page's is kept for the newest
 * CLOCK_PONGS pongs; the one with the shortest round trip (the least delayed, as NTP's filter
 * takes it) is the page's estimate.
 * @param {Fresh} fresh
 * @param {number} wire @param {number} rtt (ms) @param {number} now
 */
export function notePong(fresh, wire, rtt, now) {
  if (!Number.isFinite(wire) || !Number.isFinite(rtt) || rtt < 0) return;
  const pongs = fresh.clock;
  pongs.push({ lead: wire - (now - rtt / 2) / 1000, rtt });
  if (pongs.length > CLOCK_PONGS) pongs.shift();
}

/**
 * The station's wire clock at the page's `now` (s); null before a pong that told it.
 * @param {Fresh} fresh @param {number} now
 */
export function stationNow(fresh, now) {
  const pongs = fresh.clock;
  if (!pongs.length) return null;
  let best = pongs[0];
  for (const p of pongs) if (p.rtt < best.rtt) best = p;
  return now / 1000 + best.lead;
}

/**
 * How old a camera frame is at `now` (s): the station's clock now minus its capture, which the
 * robot stamped on its own clock (the state's "offset": robot minus station, estimated from the
 * session's exchanges). null while either clock is unknown.
 * @param {number} stamp the frame's capture stamp (s, robot clock)
 * @param {{ offset?: number | null } | null | undefined} clock the state's "clock"
 * @param {Fresh} fresh @param {number} now
 */
export function frameAge(stamp, clock, fresh, now) {
  const station = stationNow(fresh, now);
  if (station === null || !clock || typeof clock.offset !== "number" || !Number.isFinite(stamp))
    return null;
  return station - (stamp - clock.offset);
}

/**
 * The delay chip's text: the painted frame's age and the link's round trip (s), as numbers.
 * @param {number | null} age @param {number | null | undefined} rtt
 */
export function delayText(age, rtt) {
  const f = (/** @type {number | null | undefined} */ x) =>
    typeof x === "number" && Number.isFinite(x) ? `${x.toFixed(2)} s` : "-";
  return `frame age ${f(age)} · round trip ${f(rtt)}`;
}

/**
 * The speed cap chip's text: the robot's delay rule's cap and the round trip it measured
 * itself; null when the robot has no delay rule (or says something that cannot be one).
 * @param {{ cap: number, rtt: number } | null | undefined} speedCap
 */
export function speedCapText(speedCap) {
  if (!speedCap) return null;
  const { cap, rtt } = speedCap;
  if (!(Number.isFinite(cap) && cap >= 0 && Number.isFinite(rtt) && rtt >= 0)) return null;
  return `speed cap ${cap.toFixed(2)} m/s (round trip ${rtt.toFixed(1)} s)`;
}

/**
 * The path chip's text: which path carries a link through a relay, and its round trip (s, the
 * session's echoes); null off a relay (or for what cannot be a path).
 * @param {{ via: string, relay: string } | null | undefined} path
 * @param {number | null | undefined} rtt
 */
export function pathText(path, rtt) {
  if (!path || (path.via !== "direct" && path.via !== "relay")) return null;
  const trip = typeof rtt === "number" && Number.isFinite(rtt) && rtt >= 0
    ? ` · round trip ${(rtt * 1000).toFixed(rtt < 0.01 ? 1 : 0)} ms` : "";
  const via = path.via === "direct" ? `direct (relay ${path.relay} standing by)` : `relay ${path.relay}`;
  return `path: ${via}${trip}`;
}
