// @ts-check
// freelook cockpit: the fleet list (a station on a Zenoh bus with several robots). Each row is a
// robot: its mode, speed and who controls it; "drive" picks it (the server stops and lets go of
// the robot driven before, and asks the new one for control: the robot may refuse while another
// station holds it, and then neither the title nor the button says it is driven). A robot not
// heard for 2 s is "silent". The cockpit calls onFleet with each {"type": "fleet"} message.

/** @typedef {import("./messages.js").FleetRobot} FleetRobot */
/** @typedef {import("./messages.js").FleetMessage} FleetMessage */

/**
 * @param {FleetRobot} robot @param {number} station
 * @returns {string}
 */
function controlText(robot, station) {
  if (robot.controller === null || robot.controller === undefined) return "-";
  if (robot.controller === 0) return "free";
  return robot.controller === station ? "you" : `station ${robot.controller}`;
}

/**
 * The fleet list, sending the operator's pick with `send`.
 * @param {(message: object) => void} send
 */
export function createFleet(send) {
  const fleet = { last: null, selects: 0, onFleet };

  /** @param {FleetRobot} robot @param {number} station */
  function row(robot, station) {
    const tr = document.createElement("tr");
    tr.dataset.robot = robot.name;
    tr.className = robot.driving ? "driving" : "";
    const name = document.createElement("td");
    name.textContent = robot.name;
    name.title = robot.model || "";
    const mode = document.createElement("td");
    mode.className = "fleet-mode";
    const silent = robot.age === null || robot.age === undefined || robot.age > 2;
    mode.textContent = robot.estop ? "E-STOP" : silent ? "silent" : (robot.mode || "-");
    const speed = document.createElement("td");
    speed.textContent = robot.v === null || robot.v === undefined ? "-" : `${robot.v.toFixed(2)} m/s`;
    const control = document.createElement("td");
    control.className = "fleet-control";
    control.textContent = controlText(robot, station);
    if (robot.driving && robot.refused) control.textContent += " (refused you)";
    const pick = document.createElement("td");
    const button = document.createElement("button");
    button.className = "fleet-drive";
    // picked is not driven: the robot grants control, or refuses it while another holds it
    button.textContent = !robot.driving ? "drive" : robot.in_control ? "driving" : robot.refused ? "refused" : "asking";
    if (robot.driving && robot.refused) button.title = "the robot refused: another station holds it; asked again every second";
    button.disabled = robot.driving;
    button.addEventListener("click", () => {
      fleet.selects += 1;
      send({ type: "fleet_select", robot: robot.name });
    });
    pick.appendChild(button);
    tr.append(name, mode, speed, control, pick);
    return tr;
  }

  /** @param {FleetMessage} msg */
  function onFleet(msg) {
    if (!msg || !Array.isArray(msg.robots)) return;
    fleet.last = msg;
    const box = document.getElementById("fleet-box");
    const table = document.getElementById("fleet");
    if (!box || !table) return;
    box.hidden = false;
    table.replaceChildren(...msg.robots.map((robot) => row(robot, msg.station)));
    const title = document.getElementById("fleet-title");
    const picked = msg.robots.find((r) => r.name === msg.selected);
    const held = picked && picked.controller ? ` (station ${picked.controller} holds it)` : "";
    if (title) {
      title.textContent = !picked || picked.in_control ? `Fleet · station ${msg.station} drives ${msg.selected}`
        : picked.refused ? `Fleet · station ${msg.station}: ${msg.selected} refused${held}`
          : `Fleet · station ${msg.station} asks for ${msg.selected}`;
    }
  }
  return fleet;
}
