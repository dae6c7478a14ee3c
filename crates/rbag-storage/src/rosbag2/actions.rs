//! ROS 2 actions as rosbag2 (Kilted and later) records them: five topics per action, which the
//! recorder selects and `ros2 bag info` lists apart, under the action's name.
//!
//! An action `/fibonacci` of type `example_interfaces/action/Fibonacci` is recorded as
//! `/fibonacci/_action/{send_goal,cancel_goal,get_result}/_service_event` (service
//! introspection events) and `/fibonacci/_action/{feedback,status}`. A topic belongs to an
//! action only when both its name ends with one of these suffixes and its type matches that
//! part's pattern (rosbag2_cpp `action_utils.cpp`, `is_topic_belong_to_action`): a plain topic
//! that happens to be called `/x/_action/status` is not an action's.

/// One of an action's five recorded topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActionPart {
    /// `_action/send_goal/_service_event`: `pkg/action/T_SendGoal_Event`.
    SendGoal,
    /// `_action/cancel_goal/_service_event`: `action_msgs/srv/CancelGoal_Event`.
    CancelGoal,
    /// `_action/get_result/_service_event`: `pkg/action/T_GetResult_Event`.
    GetResult,
    /// `_action/feedback`: `pkg/action/T_FeedbackMessage`.
    Feedback,
    /// `_action/status`: `action_msgs/msg/GoalStatusArray`.
    Status,
}

impl ActionPart {
    /// The five parts, in the order `ros2 bag info` lists them (topics, then services).
    pub const ALL: [ActionPart; 5] =
        [ActionPart::Feedback, ActionPart::Status, ActionPart::SendGoal, ActionPart::CancelGoal, ActionPart::GetResult];

    /// The topic name's suffix after the action's name.
    pub fn suffix(self) -> &'static str {
        match self {
            ActionPart::SendGoal => "/_action/send_goal/_service_event",
            ActionPart::CancelGoal => "/_action/cancel_goal/_service_event",
            ActionPart::GetResult => "/_action/get_result/_service_event",
            ActionPart::Feedback => "/_action/feedback",
            ActionPart::Status => "/_action/status",
        }
    }

    /// The short name `ros2 bag info` prints (`send_goal`, `feedback`, ...).
    pub fn short_name(self) -> &'static str {
        match self {
            ActionPart::SendGoal => "send_goal",
            ActionPart::CancelGoal => "cancel_goal",
            ActionPart::GetResult => "get_result",
            ActionPart::Feedback => "feedback",
            ActionPart::Status => "status",
        }
    }

    /// Whether this part is a service's event topic (else a plain topic of the action).
    pub fn is_service(self) -> bool {
        matches!(self, ActionPart::SendGoal | ActionPart::CancelGoal | ActionPart::GetResult)
    }

    /// Whether `ros_type` fits this part (rosbag2's type patterns, searched as
    /// `std::regex_search` does: `.+/action/.+SendGoal_Event$` and so on).
    pub fn type_matches(self, ros_type: &str) -> bool {
        match self {
            ActionPart::SendGoal => action_typed(ros_type, "SendGoal_Event"),
            ActionPart::GetResult => action_typed(ros_type, "GetResult_Event"),
            ActionPart::Feedback => action_typed(ros_type, "_FeedbackMessage"),
            ActionPart::CancelGoal => ros_type == "action_msgs/srv/CancelGoal_Event",
            ActionPart::Status => ros_type == "action_msgs/msg/GoalStatusArray",
        }
    }

    /// The part whose suffix `topic` ends with (name only, type unchecked), and the action's
    /// name before it.
    pub fn of_name(topic: &str) -> Option<(&str, ActionPart)> {
        Self::ALL.into_iter().find_map(|p| {
            let name = topic.strip_suffix(p.suffix())?;
            (!name.is_empty()).then_some((name, p))
        })
    }
}

/// `.+/action/.+{suffix}$`: something, `/action/`, at least one more character, the suffix.
fn action_typed(ros_type: &str, suffix: &str) -> bool {
    let Some(head) = ros_type.strip_suffix(suffix) else { return false };
    head.match_indices("/action/").any(|(i, m)| i > 0 && head.len() > i + m.len())
}

/// The action `topic` of type `ros_type` belongs to (its name) and which part it is; `None` for
/// a topic that is not an action's (name and type must both fit).
pub fn action_of<'a>(topic: &'a str, ros_type: &str) -> Option<(&'a str, ActionPart)> {
    ActionPart::of_name(topic).filter(|(_, p)| p.type_matches(ros_type))
}

/// The five topic names recorded for the action `name` (`--actions`).
pub fn action_topics(name: &str) -> [String; 5] {
    let name = name.trim_end_matches('/');
    ActionPart::ALL.map(|p| format!("{name}{}", p.suffix()))
}

/// The action type an action topic's type names (`pkg/action/T_SendGoal_Event` →
/// `pkg/action/T`); `None` for the parts whose type is the same for every action (cancel_goal,
/// status) or a type that does not fit.
pub fn action_type(part: ActionPart, ros_type: &str) -> Option<String> {
    if !part.type_matches(ros_type) {
        return None;
    }
    let suffix = match part {
        ActionPart::SendGoal => "_SendGoal_Event",
        ActionPart::GetResult => "_GetResult_Event",
        ActionPart::Feedback => "_FeedbackMessage",
        ActionPart::CancelGoal | ActionPart::Status => return None,
    };
    ros_type.strip_suffix(suffix).filter(|t| !t.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_and_type_must_both_fit() {
        let f = "/fibonacci";
        assert_eq!(
            action_of(
                "/fibonacci/_action/send_goal/_service_event",
                "example_interfaces/action/Fibonacci_SendGoal_Event"
            ),
            Some((f, ActionPart::SendGoal))
        );
        assert_eq!(
            action_of("/fibonacci/_action/cancel_goal/_service_event", "action_msgs/srv/CancelGoal_Event"),
            Some((f, ActionPart::CancelGoal))
        );
        assert_eq!(
            action_of("/fibonacci/_action/feedback", "example_interfaces/action/Fibonacci_FeedbackMessage"),
            Some((f, ActionPart::Feedback))
        );
        assert_eq!(
            action_of("/fibonacci/_action/status", "action_msgs/msg/GoalStatusArray"),
            Some((f, ActionPart::Status))
        );
        assert_eq!(action_of("/fibonacci/_action/status", "std_msgs/msg/String"), None);
        assert_eq!(action_of("/fibonacci/_action/feedback", "example_interfaces/msg/Fibonacci_FeedbackMessage"), None);
        assert_eq!(action_of("/_action/status", "action_msgs/msg/GoalStatusArray"), None);
        assert_eq!(action_of("/fibonacci/status", "action_msgs/msg/GoalStatusArray"), None);
        assert_eq!(action_of("/a/_action/send_goal/_service_event", "p/action/SendGoal_Event"), None);
    }

    #[test]
    fn topics_and_types_of_an_action() {
        assert_eq!(
            action_topics("/fibonacci/"),
            [
                "/fibonacci/_action/feedback",
                "/fibonacci/_action/status",
                "/fibonacci/_action/send_goal/_service_event",
                "/fibonacci/_action/cancel_goal/_service_event",
                "/fibonacci/_action/get_result/_service_event",
            ]
        );
        assert_eq!(
            action_type(ActionPart::GetResult, "example_interfaces/action/Fibonacci_GetResult_Event").as_deref(),
            Some("example_interfaces/action/Fibonacci")
        );
        assert_eq!(action_type(ActionPart::Status, "action_msgs/msg/GoalStatusArray"), None);
        assert_eq!(action_type(ActionPart::Feedback, "x/msg/y"), None);
    }
}
