// @ts-check
// freelook: the JSON messages the operator station sends the pages, as JSDoc types. They are
// written from what the station builds (freelook/operator/_view.py: hello_message and
// state_message; _fleet.py: FleetStation.summary), and tests/web/test_message_types.py holds
// them to it: every field sent is named here, every field named here is sent, and a field
// without [brackets] is sent every time. A type named in a property's braces is checked in
// turn. Nothing here runs: the pages name these types with import("./messages.js").

/**
 * The first message on each socket: the robot, its map, the cameras, the arm and the modes.
 * @typedef {object} Hello
 * @property {"hello"} type
 * @property {HelloRobot} robot
 * @property {ArmDescription | null} arm  null: no arm, or the thesis profile (no arm commands)
 * @property {Camera[]} cameras  the cameras beyond the driving one (stream 0)
 * @property {number} robot_tx_ms  the robot's telemetry spacing (ms)
 * @property {number} operator_tx_ms  the station's command spacing (ms)
 * @property {string} wire  the wire profile: "native" or "thesis"
 * @property {Modes} modes
 * @property {GoalSettings} goal  click-to-go's settings
 * @property {string} [video_note]  said in place of the camera (the thesis profile has none)
 * @property {MapInfo} [map]  the robot's map, when it has one
 * @property {FleetMessage} [fleet]  a station driving one robot of a fleet
 */

/**
 * @typedef {object} HelloRobot
 * @property {string} name
 * @property {Footprint} footprint
 * @property {number[]} zones  the safety zones' boundaries (m), innermost first
 * @property {[number, number]} camera_mount  the pan-tilt's place on the robot (forward, left; m)
 * @property {boolean} has_pan
 * @property {DrivingCamera} camera
 */

/**
 * The driving camera (stream 0): its picture's size, field of view and height on the robot.
 * @typedef {object} DrivingCamera
 * @property {number} width  px
 * @property {number} height  px
 * @property {number} fov_deg  across its width
 * @property {number} mount_height  m above the ground (0: no pan-tilt unit)
 */

/**
 * @typedef {object} Footprint
 * @property {number} length  m
 * @property {number} width  m
 * @property {number} center_forward  the box's centre ahead of the robot's origin (m)
 */

/**
 * @typedef {object} ArmDescription
 * @property {string} name
 * @property {string[]} arm_links  the boxes an actuated joint moves
 * @property {string[]} joints  the jogged joints, in order
 * @property {number[]} limits  each jogged joint's top speed (rad/s or m/s)
 * @property {ArmBox[]} boxes
 * @property {number} max_opening  the gripper's (m)
 */

/**
 * @typedef {object} ArmBox
 * @property {string} name
 * @property {number[]} size  full size (m)
 */

/**
 * @typedef {object} Camera
 * @property {number} stream
 * @property {string} name
 * @property {number} layout  0 one image, 1 a side-by-side stereo pair (protocol.js: LAYOUT)
 * @property {number} width  px, the whole frame (both eyes of a pair)
 * @property {number} height  px
 * @property {number} fov_deg
 * @property {string} kind  "visible" or "thermal"
 * @property {number | null} stereo_baseline  m (null: not a stereo pair)
 * @property {string} mount  "pan_tilt" or the arm link it rides on
 */

/**
 * @typedef {object} Modes
 * @property {Record<string, string>} unoffered  the page's modes not offered, each with why
 * @property {boolean} robot_side_tracking  whether robot-side trajectories are carried
 * @property {Refusal | null} refusal  the newest refusal of what the operator asked for
 */

/**
 * @typedef {object} Refusal
 * @property {string} mode
 * @property {string} reason
 * @property {number} age  s
 */

/**
 * @typedef {object} MapInfo
 * @property {string} png  base64 PNG, north up
 * @property {[number, number]} origin  the lower-left corner's world position (m)
 * @property {number} resolution  m per cell
 * @property {number} width  cells
 * @property {number} height  cells
 * @property {Place[]} places
 * @property {KeepOut[]} keep_out
 */

/**
 * @typedef {object} Place
 * @property {string} name
 * @property {string} kind  "home", "dock", "goal", ...
 * @property {number} x
 * @property {number} y
 */

/**
 * @typedef {object} KeepOut
 * @property {string} name
 * @property {string} kind  "line" or "area"
 * @property {number[][]} vertices
 */

/**
 * The fleet list (also its own message, twice a second).
 * @typedef {object} FleetMessage
 * @property {"fleet"} type
 * @property {number} station  this station's id
 * @property {string} selected  the robot driven
 * @property {FleetRobot[]} robots
 */

/**
 * @typedef {object} FleetRobot
 * @property {string} name
 * @property {string} model
 * @property {boolean} driving
 * @property {boolean} in_control
 * @property {boolean} refused
 * @property {number | null} controller  the station in control, 0 none; null: not heard
 * @property {string | null} mode
 * @property {number[] | null} pose  x, y, θ
 * @property {number | null} v
 * @property {boolean} estop
 * @property {number | null} age  s since heard
 */

/**
 * The periodic state: the robot's own report and the link. The robot's fields (from pose on)
 * come once it has reported; the thesis profile's position packet gives pose, v and omega only.
 * @typedef {object} State
 * @property {"state"} type
 * @property {string | null} mode  the mode the robot reports (the thesis profile reports none)
 * @property {boolean} estop
 * @property {number | null} age  how old the robot's newest report is as this leaves (s)
 * @property {Rates} rates
 * @property {Clock} clock
 * @property {LinkState} link
 * @property {boolean} needs_release  the controls act again only once let go
 * @property {boolean} in_control
 * @property {string} controller  who holds control, as said: "station 2", "this station", "none"
 * @property {TxState} robot_tx
 * @property {TxState} operator_tx
 * @property {number[][]} reference  the newest trajectory's points
 * @property {Modes} modes
 * @property {GoalView | null} goal  click-to-go: the newest goal sent (null: none yet)
 * @property {boolean} arbitration  false: the thesis profile, no stations and no control to hold
 * @property {number} [t]  the report's stamp (s, robot clock)
 * @property {Pose} [pose]  localized
 * @property {Pose} [odom]
 * @property {number} [v]  measured (m/s)
 * @property {number} [omega]  measured (rad/s)
 * @property {Twist} [cmd]  commanded, after safety
 * @property {number} [pan]  rad
 * @property {number} [tilt]  rad
 * @property {boolean} [localizing]  a global search runs: the pose is not yet trusted
 * @property {Safety} [safety]
 * @property {ArmView} [arm]
 * @property {Autonomy} [autonomy]
 * @property {Laser} [laser]
 * @property {Sonar} [sonar]
 * @property {Prediction | null} [prediction]  where the station predicts the robot is (null:
 *   the robot's clock not known yet)
 */

/**
 * Click-to-go's settings ([goal] in the robot's description).
 * @typedef {object} GoalSettings
 * @property {number} offer_round_trip  s: above this round trip the page offers click-to-go
 * @property {number} tolerance  m from the goal at which it is reached
 */

/**
 * The newest goal this station sent and what became of it (operator/_goal.py).
 * @typedef {object} GoalView
 * @property {number} x  m, on the map
 * @property {number} y
 * @property {string} state  "sent", "driving", "reached", "taken over", "cancelled",
 *   "stopped short" or "refused"
 * @property {string} reason  why it was refused or stopped short ("" otherwise)
 * @property {number} age  s since it was sent, or since it ended
 */

/**
 * Where the robot is now, predicted by the station from its last report and the commands in
 * flight (operator/_prediction.py); times on the robot's clock, as the report's stamp t.
 * @typedef {object} Prediction
 * @property {number} t  the moment the ghost stands for (s, robot clock): the station's now
 * @property {number} lead  s ahead of the report it was worked out from
 * @property {number} delay  the one-way delay it used (s)
 * @property {number} spread  the delay's spread over the last seconds (s)
 * @property {Pose} pose  the robot now
 * @property {number} pan  rad
 * @property {number[][]} footprint  the ground the driving camera sees now (four map points)
 * @property {Arrival} arrival  the robot when a command sent now lands
 * @property {number} arrival_pan  rad
 * @property {number[][]} path  the robot's origin from now over the next seconds (m)
 * @property {number[]} radii  the envelope's radius at each path point (m)
 * @property {number} committed  the path's first points, before a command sent now lands
 */

/**
 * @typedef {object} Arrival
 * @property {number} t  s, robot clock
 * @property {number} x  m
 * @property {number} y  m
 * @property {number} theta  rad
 */

/**
 * @typedef {object} Rates
 * @property {number} telemetry_hz  the robot's reports per second
 * @property {number} video_fps  the driving camera's frames per second
 */

/**
 * The robot's clock and the link's delays (s; null before the first exchange).
 * @typedef {object} Clock
 * @property {number | null} offset  the robot's clock minus the station's wire clock
 * @property {number | null} error
 * @property {number | null} rtt
 * @property {number | null} rtt_min
 * @property {number | null} up
 * @property {number | null} down
 */

/**
 * @typedef {object} LinkState
 * @property {boolean} connected  the robot heard within the last second
 * @property {string | null} session  "open", "opening" or "unanswered"; null without sessions
 * @property {LinkStats} down  robot → station, as the station counts it
 * @property {LinkStats | null} up  station → robot, as the robot reports it
 * @property {LinkPath | null} path  which path carries a link through a relay; null off one
 */

/**
 * @typedef {object} LinkPath
 * @property {string} via  "direct" (a hole punch found the round trip) or "relay"
 * @property {string} relay  the relays given, HOST:PORT, in order
 */

/**
 * @typedef {object} LinkStats
 * @property {number} rx_rate_hz  packets received per second
 * @property {number} tx_rate_hz
 * @property {number} drop_percent
 * @property {number} received
 * @property {number} lost
 */

/**
 * @typedef {object} TxState
 * @property {boolean} enabled
 * @property {number} spacing_ms
 */

/**
 * @typedef {object} Pose
 * @property {number} x  m
 * @property {number} y  m
 * @property {number} theta  rad
 */

/**
 * @typedef {object} Twist
 * @property {number} v  m/s
 * @property {number} omega  rad/s
 */

/**
 * @typedef {object} Safety
 * @property {number | null} zone  the acting zone, innermost 0; null none
 * @property {number} scale  the speed scale applied (0 stops)
 * @property {string[]} reasons  what acted, e.g. "zone", "bumper"
 * @property {SpeedCap | null} speed_cap  the robot's delay rule (null: it has none)
 */

/**
 * @typedef {object} SpeedCap
 * @property {number} cap  m/s: the speed the robot can stop from within the clear range ahead
 * @property {number} rtt  s: the round trip it measured itself, the cap's
 */

/**
 * @typedef {object} ArmView
 * @property {number[]} positions  rad, the jogged joints
 * @property {number[]} velocities
 * @property {Gripper} gripper
 * @property {"clear" | "slow" | "stop"} phase  the most restrictive since the last view
 * @property {string[]} phases  every phase since the last view, in order
 * @property {string[][]} slow_pairs
 * @property {string[][]} stop_pairs
 * @property {string[]} red  the links in a slow or stop pair
 * @property {number[][]} centres  each box's centre (m)
 * @property {number[][]} rotations  each box's rotation, row-major 3×3
 */

/**
 * @typedef {object} Gripper
 * @property {number} opening  m
 * @property {boolean} holding
 */

/**
 * @typedef {object} Autonomy
 * @property {string} phase  the disposal task's phase, e.g. "approach_receptacle"
 * @property {number} progress  0…1
 * @property {boolean} paused
 * @property {number} recoveries
 */

/**
 * @typedef {object} Laser
 * @property {number} angle_min  rad
 * @property {number} angle_increment  rad
 * @property {number} range_max  m
 * @property {number[]} ranges  m
 * @property {[number, number]} mount  forward, left (m)
 */

/**
 * @typedef {object} Sonar
 * @property {number[]} ranges  m
 * @property {number[]} bearings  rad
 * @property {number[][]} origins  each transducer's place (forward, left; m)
 * @property {number} cone  rad
 * @property {number} range_max  m
 */

export {};
