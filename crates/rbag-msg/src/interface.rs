//! ROS 2 `.srv` and `.action` definitions, and the types rosidl derives from them: what a bag
//! records on a service-event or action topic is one of these derived types, and RIHS01 hashes
//! of services and actions are defined over them.
//!
//! A service `pkg/srv/X` gives `X_Request` and `X_Response` (the two `---`-separated parts),
//! `X_Event` (`service_msgs/msg/ServiceEventInfo info`, `X_Request[<=1] request`,
//! `X_Response[<=1] response`) and `X` itself, described by rosidl as a type whose fields are
//! `request_message`, `response_message` and `event_message`. An action `pkg/action/X` gives
//! `X_Goal`, `X_Result`, `X_Feedback`, the services `X_SendGoal` (`goal_id` + `goal` →
//! `accepted` + `stamp`) and `X_GetResult` (`goal_id` → `status` + `result`), `X_FeedbackMessage`
//! (`goal_id` + `feedback`), and `X` (fields `goal`, `result`, `feedback`, `send_goal_service`,
//! `get_result_service`, `feedback_message`), as `rosidl_parser.definition` builds them.

use crate::definition::{parse, Array, Dialect, Field, FieldType, MsgDef};
use crate::registry::Registry;
use crate::{Error, Result};

/// The type of a service event's `info` field.
pub const SERVICE_EVENT_INFO: &str = "service_msgs/msg/ServiceEventInfo";
/// ROS 2's time type.
pub const TIME: &str = "builtin_interfaces/msg/Time";
/// The type of an action's goal id.
pub const UUID: &str = "unique_identifier_msgs/msg/UUID";

/// The core types derived types reference, as ROS 2 defines them. Bags carry the definitions of
/// a service's own parts only, so these are added to a registry that lacks them.
const CORE_TYPES: &[(&str, &str)] = &[
    (
        SERVICE_EVENT_INFO,
        "uint8 REQUEST_SENT = 0\nuint8 REQUEST_RECEIVED = 1\nuint8 RESPONSE_SENT = 2\nuint8 RESPONSE_RECEIVED = 3\n\
         uint8 event_type\nbuiltin_interfaces/Time stamp\nchar[16] client_gid\nint64 sequence_number\n",
    ),
    (TIME, "int32 sec\nuint32 nanosec\n"),
    (UUID, "uint8[16] uuid\n"),
];

/// Suffixes of the types derived from a service, then from an action (longest first, so
/// `_SendGoal_Request` is not taken for `_Request`).
const SERVICE_SUFFIXES: &[&str] = &["_Request", "_Response", "_Event"];
const ACTION_SUFFIXES: &[&str] = &[
    "_SendGoal_Request",
    "_SendGoal_Response",
    "_SendGoal_Event",
    "_GetResult_Request",
    "_GetResult_Response",
    "_GetResult_Event",
    "_FeedbackMessage",
    "_SendGoal",
    "_GetResult",
    "_Feedback",
    "_Result",
    "_Goal",
];

impl Registry {
    /// Adds a service from its `.srv` text (`pkg/srv/X` or `pkg/X`), with its derived types.
    pub fn add_srv(&mut self, name: &str, text: &str) -> Result<()> {
        let name = self.interface_name(name, "srv")?;
        let [request, response] = self.parse_sections::<2>(&name, text, ["_Request", "_Response"])?;
        self.add_service(&name, request, response)
    }

    /// Adds a service from its request and response (`name` is `pkg/srv/X`, or for an action's
    /// services `pkg/action/X_SendGoal`), with `X_Event` and `X`.
    pub fn add_service(&mut self, name: &str, request: MsgDef, response: MsgDef) -> Result<()> {
        self.require_ros2(name)?;
        let (req, resp, event) = (format!("{name}_Request"), format!("{name}_Response"), format!("{name}_Event"));
        self.add_def(&req, request);
        self.add_def(&resp, response);
        self.add_def(
            &event,
            fields(&[
                (SERVICE_EVENT_INFO, "info", Array::Single),
                (&req, "request", Array::Bounded(1)),
                (&resp, "response", Array::Bounded(1)),
            ]),
        );
        self.add_def(
            name,
            fields(&[
                (&req, "request_message", Array::Single),
                (&resp, "response_message", Array::Single),
                (&event, "event_message", Array::Single),
            ]),
        );
        self.add_core_types()
    }

    /// Adds an action from its `.action` text (`pkg/action/X` or `pkg/X`), with its derived types.
    pub fn add_action(&mut self, name: &str, text: &str) -> Result<()> {
        let name = self.interface_name(name, "action")?;
        let [goal, result, feedback] = self.parse_sections::<3>(&name, text, ["_Goal", "_Result", "_Feedback"])?;
        self.add_action_parts(&name, goal, result, feedback)
    }

    /// Adds an action (`pkg/action/X`) from its goal, result and feedback, with the services,
    /// messages and action type rosidl derives from them.
    pub fn add_action_parts(&mut self, name: &str, goal: MsgDef, result: MsgDef, feedback: MsgDef) -> Result<()> {
        self.require_ros2(name)?;
        let (g, r, f) = (format!("{name}_Goal"), format!("{name}_Result"), format!("{name}_Feedback"));
        self.add_def(&g, goal);
        self.add_def(&r, result);
        self.add_def(&f, feedback);
        let send_goal = format!("{name}_SendGoal");
        self.add_service(
            &send_goal,
            fields(&[(UUID, "goal_id", Array::Single), (&g, "goal", Array::Single)]),
            fields(&[("bool", "accepted", Array::Single), (TIME, "stamp", Array::Single)]),
        )?;
        let get_result = format!("{name}_GetResult");
        self.add_service(
            &get_result,
            fields(&[(UUID, "goal_id", Array::Single)]),
            fields(&[("int8", "status", Array::Single), (&r, "result", Array::Single)]),
        )?;
        let feedback_message = format!("{name}_FeedbackMessage");
        self.add_def(&feedback_message, fields(&[(UUID, "goal_id", Array::Single), (&f, "feedback", Array::Single)]));
        self.add_def(
            name,
            fields(&[
                (&g, "goal", Array::Single),
                (&r, "result", Array::Single),
                (&f, "feedback", Array::Single),
                (&send_goal, "send_goal_service", Array::Single),
                (&get_result, "get_result_service", Array::Single),
                (&feedback_message, "feedback_message", Array::Single),
            ]),
        );
        Ok(())
    }

    /// Adds `.msg`, `.srv` or `.action` text recorded for the type `name`: text with one `---`
    /// line is the service `name` belongs to (`pkg/srv/X_Event` → `pkg/srv/X`), with two the
    /// action; otherwise it is `name`'s own `.msg`.
    pub fn add_interface(&mut self, name: &str, text: &str) -> Result<()> {
        match sections(text).len() {
            1 => self.add(name, text),
            2 => self.add_srv(&base_of(name, "srv", SERVICE_SUFFIXES), text),
            3 => self.add_action(&base_of(name, "action", ACTION_SUFFIXES), text),
            n => Err(Error::Parse {
                what: name.to_string(),
                line: 0,
                reason: format!("{} `---` separators: neither .msg, .srv nor .action", n - 1),
            }),
        }
    }

    /// Adds the core types derived types reference, where this registry lacks them.
    fn add_core_types(&mut self) -> Result<()> {
        for (name, text) in CORE_TYPES {
            if !self.contains(name) {
                self.add(name, text)?;
            }
        }
        Ok(())
    }

    fn require_ros2(&self, name: &str) -> Result<()> {
        match self.dialect() {
            Dialect::Ros2 => Ok(()),
            Dialect::Ros1 => Err(Error::Parse {
                what: name.to_string(),
                line: 0,
                reason: "services and actions are derived as ROS 2 does; this registry is ROS 1".into(),
            }),
        }
    }

    /// `pkg/kind/X` from `pkg/X` or `pkg/kind/X`.
    fn interface_name(&self, name: &str, kind: &str) -> Result<String> {
        self.require_ros2(name)?;
        match name.split('/').collect::<Vec<_>>()[..] {
            [pkg, ty] if !pkg.is_empty() && !ty.is_empty() => Ok(format!("{pkg}/{kind}/{ty}")),
            [pkg, k, ty] if k == kind && !pkg.is_empty() && !ty.is_empty() => Ok(name.to_string()),
            _ => Err(Error::Parse {
                what: name.to_string(),
                line: 0,
                reason: format!("a .{kind} type is named pkg/{kind}/Type"),
            }),
        }
    }

    /// Parses the `---`-separated parts of a `.srv`/`.action`, each named `name` + its suffix;
    /// errors give the line in the whole text.
    fn parse_sections<const N: usize>(&self, name: &str, text: &str, suffixes: [&str; N]) -> Result<[MsgDef; N]> {
        let parts = sections(text);
        if parts.len() != N {
            let what = if N == 2 { ".srv" } else { ".action" };
            return Err(Error::Parse {
                what: name.to_string(),
                line: 0,
                reason: format!("a {what} has {} `---` separators, found {}", N - 1, parts.len() - 1),
            });
        }
        let mut defs: [MsgDef; N] = std::array::from_fn(|_| MsgDef::default());
        for (i, (first_line, part)) in parts.into_iter().enumerate() {
            let what = format!("{name}{}", suffixes[i]);
            defs[i] = parse(part, Dialect::Ros2, &what).map_err(|e| shift_lines(e, first_line))?;
        }
        Ok(defs)
    }
}

/// Splits text at lines that are `---`: each part with the number of lines before it.
fn sections(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let (mut start, mut start_line, mut pos) = (0, 0, 0);
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if line.trim() == "---" {
            out.push((start_line, &text[start..pos]));
            start = pos + line.len();
            start_line = n + 1;
        }
        pos += line.len();
    }
    out.push((start_line, &text[start..]));
    out
}

/// The service or action a derived type belongs to: `pkg/srv/X_Event` → `pkg/srv/X`.
fn base_of(name: &str, kind: &str, suffixes: &[&str]) -> String {
    let (pkg, ty) = match name.split('/').collect::<Vec<_>>()[..] {
        [pkg, _, ty] | [pkg, ty] => (pkg, ty),
        _ => return name.to_string(),
    };
    let ty = suffixes.iter().find_map(|s| ty.strip_suffix(s).filter(|b| !b.is_empty())).unwrap_or(ty);
    format!("{pkg}/{kind}/{ty}")
}

/// Moves a parse error's line by the lines that precede the parsed part.
pub(crate) fn shift_lines(e: Error, by: usize) -> Error {
    match e {
        Error::Parse { what, line, reason } => Error::Parse { what, line: line + by, reason },
        other => other,
    }
}

/// A definition of single fields `(type, name, array)`.
fn fields(list: &[(&str, &str, Array)]) -> MsgDef {
    let fields = list
        .iter()
        .map(|(ty, name, array)| Field {
            ty: FieldType { base: ty.to_string(), string_bound: None, array: *array },
            name: name.to_string(),
            default: None,
        })
        .collect();
    MsgDef { fields, constants: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ros2() -> Registry {
        Registry::new(Dialect::Ros2)
    }

    // Hashes rosidl generated for example_interfaces (Kilted `*__description.c`, as vendored by
    // hpmicro/hpm_sdk's micro-ROS); the .srv/.action texts are the raw sources embedded there.
    #[test]
    fn add_two_ints_hashes_equal_rosidl() {
        let mut r = ros2();
        r.add_srv("example_interfaces/srv/AddTwoInts", "int64 a\nint64 b\n---\nint64 sum").unwrap();
        for (ty, hash) in [
            ("AddTwoInts", "e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"),
            ("AddTwoInts_Request", "000c5fd92d6b2e1a05949348f584d6d652adea1e92d691792011ac2273508302"),
            ("AddTwoInts_Response", "de5c030d4af33cba2749310b249737b631594703f9300495f48bffb2b44dcc2f"),
            ("AddTwoInts_Event", "32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8"),
        ] {
            assert_eq!(r.rihs01(&format!("example_interfaces/srv/{ty}")).unwrap(), format!("RIHS01_{hash}"), "{ty}");
        }
        let event = r.get("example_interfaces/srv/AddTwoInts_Event").unwrap();
        assert_eq!(
            event.fields[1].ty,
            FieldType {
                base: "example_interfaces/srv/AddTwoInts_Request".into(),
                string_bound: None,
                array: Array::Bounded(1)
            }
        );
    }

    #[test]
    fn fibonacci_hashes_equal_rosidl() {
        let mut r = ros2();
        r.add_action(
            "example_interfaces/Fibonacci",
            "# Goal\nint32 order\n---\n# Result\nint32[] sequence\n---\n# Feedback\nint32[] sequence",
        )
        .unwrap();
        for (ty, hash) in [
            ("Fibonacci", "9508051da1ea4658de144b09bd0690ff3de52104683d847aed764d2915906f51"),
            ("Fibonacci_Goal", "226cb437e4355dcd3e914f930382a3b0cc1da81545bd319ed554e95a03255f51"),
            ("Fibonacci_Result", "fea81394f25aa4502217953f1a021fb750e79c10bbd43f13dd94632da6569649"),
            ("Fibonacci_Feedback", "2b12e37361da6f408d4c85bc24a18de64333f29082f2ca34b5ee33dc4c8b42a9"),
            ("Fibonacci_SendGoal", "d1a57fb2a4afe8c21e34fb10db206f16ce6729b28531141472df92277c55b557"),
            ("Fibonacci_SendGoal_Request", "3d088942b413247db536576f0286768c6be8fcd5d0c9a5d544f359fba090a238"),
            ("Fibonacci_SendGoal_Response", "d8c07bb3d5b766fe4b43159c9a5222af5214e2fcc29229b991d826166c512be1"),
            ("Fibonacci_SendGoal_Event", "d5e5b312dbf847307b0e876c2ecc9d80258e95b0d17f8f7bfc581c4a29c83484"),
            ("Fibonacci_GetResult", "1b0de0d5d29dc955d92f546706568428632771db13ec84c15ec1c1a59f424a57"),
            ("Fibonacci_GetResult_Request", "c8a4f5e7d13b81286ee1043e2ecd084281cecf1ff06aaa799464f5f15479f003"),
            ("Fibonacci_GetResult_Response", "6021dc98ab9b4bbe395e48aa4de81ee5f68eb570f88358affcc648146668b24f"),
            ("Fibonacci_GetResult_Event", "ac4e9cdb954c2e192c9f0753d46f59ab6f0101d5fb5b9542fd8ab2906e40c4d9"),
            ("Fibonacci_FeedbackMessage", "c1de71afd52e49a89c53d8262366884185bc0a02f78ce051c4e46b0a7fe59bb2"),
        ] {
            assert_eq!(r.rihs01(&format!("example_interfaces/action/{ty}")).unwrap(), format!("RIHS01_{hash}"), "{ty}");
        }
        assert_eq!(r.rihs01(UUID).unwrap(), "RIHS01_1b8e8aca958cbea28fe6ef60bf6c19b683c97a9ef60bb34752067d0f2f7ab437");
    }

    #[test]
    fn recorded_text_is_routed_by_its_separators() {
        let mut r = ros2();
        r.add_interface("test_msgs/srv/BasicTypes_Event", "bool a\n---\nbool b\n").unwrap();
        assert!(r.contains("test_msgs/srv/BasicTypes_Request") && r.contains("test_msgs/srv/BasicTypes"));
        r.add_interface("a/action/Move_FeedbackMessage", "int32 x\n---\n---\nfloat64 p\n").unwrap();
        assert!(r.contains("a/action/Move_SendGoal_Event") && r.get("a/action/Move_Result").unwrap().fields.is_empty());
        r.add_interface("a/msg/Plain", "int32 x\n").unwrap();
        assert!(r.contains("a/msg/Plain"));
        // A bag's own ServiceEventInfo is kept.
        let mut own = ros2();
        own.add(SERVICE_EVENT_INFO, "uint8 event_type\n").unwrap();
        own.add_srv("a/srv/S", "---\n").unwrap();
        assert_eq!(own.get(SERVICE_EVENT_INFO).unwrap().fields.len(), 1);
    }

    #[test]
    fn errors_name_the_part_and_the_line_in_the_whole_text() {
        let mut r = ros2();
        let e = r.add_srv("pkg/srv/S", "int32 a\n---\n# c\nint32 ok\nfloat64[x] bad\n").unwrap_err().to_string();
        assert!(e.contains("pkg/srv/S_Response") && e.contains("line 5"), "{e}");
        let e = r.add_action("pkg/A", "int32 a\n---\nint32 b\n").unwrap_err().to_string();
        assert!(e.contains("pkg/action/A") && e.contains("2 `---` separators"), "{e}");
        assert!(r.add_srv("pkg/msg/S", "---\n").is_err());
        assert!(Registry::new(Dialect::Ros1).add_srv("pkg/S", "---\n").is_err());
        assert!(r.add_interface("pkg/msg/X", "---\n---\n---\n").is_err());
    }

    #[test]
    fn derived_names_map_to_their_interface() {
        assert_eq!(base_of("p/srv/X_Event", "srv", SERVICE_SUFFIXES), "p/srv/X");
        assert_eq!(base_of("p/action/X_SendGoal_Request", "action", ACTION_SUFFIXES), "p/action/X");
        assert_eq!(base_of("p/action/X_Goal", "action", ACTION_SUFFIXES), "p/action/X");
        assert_eq!(base_of("p/srv/X", "srv", SERVICE_SUFFIXES), "p/srv/X");
        assert_eq!(sections("a\n---\nb\n---\n"), vec![(0, "a\n"), (2, "b\n"), (4, "")]);
    }
}
