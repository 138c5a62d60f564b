// @ts-check
// freelook cockpit: click-to-go. When the link's round trip passes the set threshold (the hello's
// [goal] offer_round_trip, 1 s by default, changed in the settings) steering is too slow to hold,
// and the page offers click-to-go: a banner over the picture, a crosshair cursor on the picture
// and the map, and a click (a tap on a touch screen) on either sends a goal; the robot drives
// there on its own under its own safety (robot/_goal.py). G arms it at any delay, or declines the
// offer. A new click replaces the goal; any stick, key, mode or the e-stop takes over (the
// station ends the goal and says so: "taken over"), and the chip says what became of it.
// goalOffered is DOM-free (tested under node --test); the rest runs in the page.

/** @typedef {import("./messages.js").GoalView} GoalView */
/** @typedef {import("./panels.js").ToCanvas} ToCanvas */

export const GOAL_COLOUR = "#6bff9a";
const WITHDRAW = 0.8;  // the offer is withdrawn below this share of the threshold (no flicker)
const ENDED_SHOWN_S = 10;  // s an ended goal stays on the chip and the map
const ACTIVE = ["sent", "driving"];
const HELD_SHOWN_MS = 4000;  // how long the chip says a click was held back by the e-stop

/**
 * Whether click-to-go is offered at round trip ``rtt`` (s; null: none measured), given whether it
 * was: above ``threshold``, and until the round trip falls below WITHDRAW of it.
 * @param {boolean} was @param {number | null | undefined} rtt @param {number} threshold
 */
export function goalOffered(was, rtt, threshold) {
  if (rtt === null || rtt === undefined || !Number.isFinite(rtt)) return false;
  return was ? rtt >= threshold * WITHDRAW : rtt > threshold;
}

/** Whether the goal is sent or being driven to. @param {GoalView | null | undefined} g */
export function goalActive(g) { return !!g && ACTIVE.includes(g.state); }

/**
 * The goal on the map: a ring and a cross where it is, a dashed line from the robot while it
 * drives there; an ended goal faint, with what became of it.
 * @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {GoalView | null | undefined} g
 * @param {{ x: number, y: number } | undefined} robot
 */
export function drawGoal(ctx, at, g, robot) {
  if (!g || (!goalActive(g) && g.age > ENDED_SHOWN_S)) return;
  const [px, py] = at(g.x, g.y), active = goalActive(g);
  ctx.save();
  ctx.strokeStyle = GOAL_COLOUR; ctx.globalAlpha = active ? 1 : 0.5; ctx.lineWidth = 2;
  if (active && robot) {
    const [rx, ry] = at(robot.x, robot.y);
    ctx.setLineDash([5, 4]); ctx.beginPath(); ctx.moveTo(rx, ry); ctx.lineTo(px, py); ctx.stroke(); ctx.setLineDash([]);
  }
  ctx.beginPath(); ctx.arc(px, py, 9, 0, 2 * Math.PI); ctx.stroke();
  ctx.beginPath(); ctx.moveTo(px - 5, py); ctx.lineTo(px + 5, py); ctx.moveTo(px, py - 5); ctx.lineTo(px, py + 5); ctx.stroke();
  ctx.fillStyle = GOAL_COLOUR; ctx.font = "11px sans-serif";
  ctx.fillText(active ? "goal" : `goal ${g.state}`, px + 12, py - 8);
  ctx.restore();
}

/** The chip's words for the goal, or "" when there is nothing to say. @param {GoalView} g */
function goalText(g) {
  const where = `${g.x.toFixed(2)}, ${g.y.toFixed(2)} m`;
  if (g.state === "sent") return `goal: sent (${where})`;
  if (g.state === "driving") return `goal: driving to ${where}`;
  if (g.state === "taken over") return "goal: taken over by the operator";
  if (g.state === "cancelled") return "goal: stopped";
  if (g.state === "reached") return `goal reached (${where})`;
  return `goal ${g.state}${g.reason ? ": " + g.reason : ""}`;
}

/** @param {string} id */
const $ = (id) => document.getElementById(id);

/**
 * Wire click-to-go to the cockpit: its state (window.freelook; this keeps state.goal there) and
 * its socket.
 * @param {any} state @param {(obj: object) => void} send
 */
export function setupGoal(state, send) {
  state.goal = { offered: false, declined: false, forced: false, armed: false, sent: 0, heldAt: -Infinity };
  $("goal-toggle").addEventListener("click", (ev) => {
    /** @type {HTMLElement} */ (ev.currentTarget).blur();
    toggleGoal(state);
  });
  $("goal-stop").addEventListener("click", () => send({ type: "goal", action: "stop" }));
  window.addEventListener("keydown", (ev) => {
    if (ev.code !== "KeyG" || ev.repeat) return;
    if (ev.target && /** @type {HTMLElement} */ (ev.target).tagName === "INPUT") return;
    toggleGoal(state);
  });
}

/** G or the button: arm click-to-go at any delay, or decline (disarm) it. @param {any} state */
export function toggleGoal(state) {
  const g = state.goal;
  if (g.armed) { g.forced = false; if (g.offered) g.declined = true; }
  else { g.forced = true; g.declined = false; }
  showGoal(state);
}

/** The threshold (s) from the settings' field, else the hello's. @param {any} state */
function offerThreshold(state) {
  const field = /** @type {HTMLInputElement} */ ($("goal-rtt"));
  const set = Number(field.value);
  if (field.value !== "" && Number.isFinite(set) && set >= 0) return set;
  return state.hello && state.hello.goal ? state.hello.goal.offer_round_trip : 1.0;
}

/** A hello: the threshold's field shows the robot's. @param {import("./messages.js").Hello} msg */
export function goalHello(msg) {
  const field = /** @type {HTMLInputElement} */ ($("goal-rtt"));
  if (msg.goal && !field.dataset.edited) field.value = String(msg.goal.offer_round_trip);
}

/** Each state: the offer at the round trip now, the banner, the cursor, the chip. @param {any} state */
export function showGoal(state) {
  const g = state.goal, s = state.last;
  const carried = !(state.unoffered || {}).goal;
  const was = g.offered;
  g.offered = carried && goalOffered(was, s && s.clock ? s.clock.rtt : null, offerThreshold(state));
  if (was && !g.offered) g.declined = false;  // offered again later: armed again
  g.armed = carried && ((g.offered && !g.declined) || g.forced);
  document.body.classList.toggle("goal-armed", g.armed);
  const toggle = $("goal-toggle");
  toggle.classList.toggle("active", g.armed);
  toggle.hidden = !carried;
  const rtt = s && s.clock && s.clock.rtt !== null ? s.clock.rtt : null;
  $("goal-banner").hidden = !g.armed;
  $("goal-banner-text").textContent = (g.offered && rtt !== null ? `round trip ${rtt.toFixed(2)} s: ` : "")
    + "click to go · click the picture or the map where the robot should drive itself · G: off";
  const view = s ? s.goal : null;
  const chip = $("goal-chip");
  const held = performance.now() - g.heldAt < HELD_SHOWN_MS;  // a click the e-stop held back
  const said = held ? "goal: not sent, the E-STOP is engaged (release it first)"
    : view && (goalActive(view) || view.age <= ENDED_SHOWN_S) ? goalText(view) : "";
  chip.hidden = !said;
  chip.textContent = said;
  chip.className = "chip " + (held ? "bad" : !view ? "" : view.state === "reached" || view.state === "driving" ? "ok"
    : view.state === "refused" || view.state === "stopped short" ? "bad" : "warn");
  $("goal-stop").hidden = !goalActive(view);
}

/**
 * A click on the map or the picture at world point ``at`` (null: not on the ground): a goal,
 * when click-to-go is armed; whether the click was taken.
 * @param {any} state @param {(obj: object) => void} send @param {number[] | null} at
 */
export function goalClick(state, send, at) {
  if (!state.goal.armed) return false;
  if (!at) return true;  // above the horizon: no goal, and no other meaning either
  if (state.estop) { state.goal.heldAt = performance.now(); showGoal(state); return true; }
  send({ type: "goal", x: at[0], y: at[1] });
  state.goal.sent += 1;
  return true;
}
