//! The agent's todo list, rebuilt from its tool calls: the latest `TodoWrite` (which
//! always carries the whole list), or the newer task tools, replayed in order:
//! `TaskCreate` adds a pending task (its id comes back in the result),
//! `TaskUpdate` changes one task by id (status `deleted` removes it), and a structured
//! `TaskList` result, when there is one, replaces the list with what it shows.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::line::{self, clip, text};

/// Cap on the text of one item.
pub const TODO_TEXT_MAX: usize = 500;
/// Cap on the number of items kept.
pub const TODO_ITEMS_MAX: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

impl TodoStatus {
    /// Unknown statuses read as pending: the item is still there to be done.
    fn parse(value: Option<&Value>) -> TodoStatus {
        match text(value).map(str::trim) {
            Some("completed") => TodoStatus::Completed,
            Some("in_progress") => TodoStatus::InProgress,
            _ => TodoStatus::Pending,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TodoItem {
    /// The task id (task tools; TodoWrite items of some versions).
    pub id: Option<String>,
    /// What is to be done (`content` of a todo, `subject` of a task).
    pub content: String,
    pub status: TodoStatus,
    /// The "-ing" form shown while in progress.
    pub active_form: Option<String>,
}

/// Which tool the list was rebuilt from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoSource {
    TodoWrite,
    Tasks,
    /// Codex's `update_plan`.
    UpdatePlan,
    /// Gemini CLI's `write_todos`.
    WriteTodos,
    /// Qwen Code's `todo_write`.
    QwenTodoWrite,
}

/// The list, split by status, each part in the list's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TodoList {
    pub source: TodoSource,
    pub completed: Vec<TodoItem>,
    pub in_progress: Vec<TodoItem>,
    pub pending: Vec<TodoItem>,
}

impl TodoList {
    fn from_items(source: TodoSource, items: impl IntoIterator<Item = TodoItem>) -> TodoList {
        let mut list =
            TodoList { source, completed: Vec::new(), in_progress: Vec::new(), pending: Vec::new() };
        for item in items {
            match item.status {
                TodoStatus::Completed => list.completed.push(item),
                TodoStatus::InProgress => list.in_progress.push(item),
                TodoStatus::Pending => list.pending.push(item),
            }
        }
        list
    }
}

fn item_text(value: Option<&Value>) -> Option<String> {
    text(value).map(|t| clip(t.trim(), TODO_TEXT_MAX))
}

/// The items of a `TodoWrite` input; `None` when it has no `todos` array.
pub(crate) fn todo_write_items(input: &Value) -> Option<Vec<TodoItem>> {
    let todos = input.get("todos")?.as_array()?;
    Some(
        todos
            .iter()
            .filter_map(|todo| {
                Some(TodoItem {
                    id: line::id(todo.get("id")).map(|id| clip(&id, line::SHORT_TEXT_MAX)),
                    content: item_text(todo.get("content"))?,
                    status: TodoStatus::parse(todo.get("status")),
                    active_form: item_text(todo.get("activeForm")),
                })
            })
            .take(TODO_ITEMS_MAX)
            .collect(),
    )
}

/// The task tools' list, replayed call by call. Entries are never moved, so indexes
/// held for calls awaiting their result stay valid; a deleted task becomes `None`.
#[derive(Debug, Default)]
pub(crate) struct TaskBoard {
    entries: Vec<Option<TodoItem>>,
    /// TaskCreate calls whose result (with the new id) has not been seen, by tool_use id.
    awaiting_id: HashMap<String, usize>,
    /// TaskUpdate calls applied before their result, with the entry as it was before.
    awaiting_outcome: HashMap<String, (usize, Option<TodoItem>)>,
    used: bool,
}

impl TaskBoard {
    pub fn is_used(&self) -> bool {
        self.used
    }

    fn find(&self, id: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.as_ref().and_then(|t| t.id.as_deref()) == Some(id))
    }

    fn push(&mut self, item: TodoItem) -> Option<usize> {
        if self.entries.len() >= TODO_ITEMS_MAX * 2 {
            return None;
        }
        self.entries.push(Some(item));
        Some(self.entries.len() - 1)
    }

    pub fn create(&mut self, tool_use_id: Option<&str>, input: &Value) {
        self.used = true;
        let Some(subject) = item_text(input.get("subject")) else { return };
        let item = TodoItem {
            id: None,
            content: subject,
            status: TodoStatus::Pending,
            active_form: item_text(input.get("activeForm")),
        };
        if let (Some(index), Some(tool_use_id)) = (self.push(item), tool_use_id) {
            self.awaiting_id.insert(tool_use_id.to_string(), index);
        }
    }

    pub fn update(&mut self, tool_use_id: Option<&str>, input: &Value) {
        self.used = true;
        let Some(task_id) = line::id(input.get("taskId")).map(|id| clip(&id, line::SHORT_TEXT_MAX)) else {
            return;
        };
        let index = match self.find(&task_id) {
            Some(index) => index,
            // Created before the part of the transcript that was read.
            None => {
                let placeholder = TodoItem {
                    content: format!("Task #{task_id}"),
                    id: Some(task_id),
                    status: TodoStatus::Pending,
                    active_form: None,
                };
                match self.push(placeholder) {
                    Some(index) => index,
                    None => return,
                }
            }
        };
        let before = self.entries[index].clone();
        if let Some(tool_use_id) = tool_use_id {
            self.awaiting_outcome.insert(tool_use_id.to_string(), (index, before));
        }
        let status = text(input.get("status")).map(str::trim);
        if status == Some("deleted") {
            self.entries[index] = None;
            return;
        }
        let Some(task) = self.entries[index].as_mut() else { return };
        if status.is_some() {
            task.status = TodoStatus::parse(input.get("status"));
        }
        if let Some(subject) = item_text(input.get("subject")) {
            task.content = subject;
        }
        if let Some(active_form) = item_text(input.get("activeForm")) {
            task.active_form = Some(active_form);
        }
    }

    /// The result of a task tool call. `structured` is the line's `toolUseResult`.
    pub fn result(&mut self, tool_use_id: &str, is_error: bool, content: &str, structured: Option<&Value>) {
        if let Some(index) = self.awaiting_id.remove(tool_use_id) {
            if is_error {
                self.entries[index] = None;
                return;
            }
            let id = structured
                .and_then(|r| line::id(r.get("task").and_then(|t| t.get("id"))))
                .or_else(|| created_task_id(content));
            if let (Some(task), Some(id)) = (self.entries[index].as_mut(), id) {
                task.id = Some(clip(&id, line::SHORT_TEXT_MAX));
            }
            return;
        }
        if let Some((index, before)) = self.awaiting_outcome.remove(tool_use_id) {
            let refused = structured.and_then(|r| r.get("success")).and_then(Value::as_bool) == Some(false);
            if is_error || refused {
                self.entries[index] = before;
            }
        }
    }

    /// A `TaskList` result that lists every task: it replaces what was rebuilt so far,
    /// keeping the `activeForm`s known from earlier calls.
    pub fn snapshot(&mut self, structured: &Value) {
        let Some(tasks) = structured.get("tasks").and_then(Value::as_array) else { return };
        self.used = true;
        let mut entries = Vec::new();
        for task in tasks.iter().take(TODO_ITEMS_MAX) {
            let (Some(id), Some(subject)) = (line::id(task.get("id")), item_text(task.get("subject"))) else {
                continue;
            };
            let id = clip(&id, line::SHORT_TEXT_MAX);
            let active_form = self
                .find(&id)
                .and_then(|i| self.entries[i].as_ref())
                .and_then(|t| t.active_form.clone())
                .or_else(|| item_text(task.get("activeForm")));
            entries.push(Some(TodoItem {
                id: Some(id),
                content: subject,
                status: TodoStatus::parse(task.get("status")),
                active_form,
            }));
        }
        self.entries = entries;
        self.awaiting_id.clear();
        self.awaiting_outcome.clear();
    }

    pub fn into_list(self) -> TodoList {
        TodoList::from_items(TodoSource::Tasks, self.entries.into_iter().flatten().take(TODO_ITEMS_MAX))
    }
}

pub(crate) fn todo_write_list(items: Vec<TodoItem>) -> TodoList {
    TodoList::from_items(TodoSource::TodoWrite, items)
}

/// A list another host's tool kept (`update_plan`, `write_todos`), split by status.
pub(crate) fn list_from(source: TodoSource, items: Vec<TodoItem>) -> TodoList {
    TodoList::from_items(source, items)
}

/// The id in TaskCreate's text result: `Task #12 created successfully: …`.
fn created_task_id(content: &str) -> Option<String> {
    let rest = &content[content.find("Task #")? + "Task #".len()..];
    let id: String =
        rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn todo_write_items_are_read_leniently() {
        let items = todo_write_items(&json!({"todos": [
            {"content": "a", "status": "completed", "activeForm": "doing a"},
            {"content": "b", "status": "weird"},
            {"content": 3, "status": "pending"},
            {"content": "c", "status": "in_progress", "id": 7}
        ]}))
        .unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(items[1].status, TodoStatus::Pending);
        assert_eq!(items[2].id.as_deref(), Some("7"));
        let list = todo_write_list(items);
        assert_eq!((list.completed.len(), list.in_progress.len(), list.pending.len()), (1, 1, 1));
        assert!(todo_write_items(&json!({"todos": "nope"})).is_none());
    }

    #[test]
    fn tasks_are_replayed_in_order() {
        let mut board = TaskBoard::default();
        board.create(Some("c1"), &json!({"subject": "Write the parser", "activeForm": "Writing the parser"}));
        board.result("c1", false, "", Some(&json!({"task": {"id": "1", "subject": "Write the parser"}})));
        board.create(Some("c2"), &json!({"subject": "Test it", "description": "…"}));
        board.result("c2", false, "Task #2 created successfully: Test it", None);
        board.create(Some("c3"), &json!({"subject": "Refused"}));
        board.result("c3", true, "hook said no", None);
        board.create(Some("c4"), &json!({"subject": "Throwaway"}));
        board.result("c4", false, "Task #3 created successfully: Throwaway", None);

        board.update(Some("u1"), &json!({"taskId": "1", "status": "completed"}));
        board.result("u1", false, "Updated task #1 status", Some(&json!({"success": true})));
        board.update(Some("u2"), &json!({"taskId": "2", "status": "in_progress"}));
        board.update(Some("u3"), &json!({"taskId": 3, "status": "deleted"}));
        board.update(Some("u4"), &json!({"taskId": "2", "status": "completed"}));
        board.result("u4", false, "", Some(&json!({"success": false, "error": "blocked"})));
        // An update for a task created before the part that was read.
        board.update(Some("u5"), &json!({"taskId": "0", "status": "pending"}));

        assert!(board.is_used());
        let list = board.into_list();
        assert_eq!(list.source, TodoSource::Tasks);
        assert_eq!(list.completed.len(), 1);
        assert_eq!(list.completed[0].content, "Write the parser");
        assert_eq!(list.completed[0].active_form.as_deref(), Some("Writing the parser"));
        assert_eq!(list.in_progress.len(), 1);
        assert_eq!(list.in_progress[0].id.as_deref(), Some("2"));
        assert_eq!(list.pending.len(), 1);
        assert_eq!(list.pending[0].content, "Task #0");
    }

    #[test]
    fn a_task_list_result_replaces_the_board() {
        let mut board = TaskBoard::default();
        board.create(Some("c1"), &json!({"subject": "A", "activeForm": "Doing A"}));
        board.result("c1", false, "Task #1 created successfully: A", None);
        board.snapshot(&json!({"tasks": [
            {"id": "1", "subject": "A", "status": "in_progress"},
            {"id": "2", "subject": "B", "status": "pending"}
        ]}));
        let list = board.into_list();
        assert_eq!(list.in_progress[0].active_form.as_deref(), Some("Doing A"));
        assert_eq!(list.pending[0].content, "B");
    }
}
