"""Background tasks (shell commands and agents) and the registry that tracks them."""

from catui.tasks.registry import FINAL_STATUSES, Task, TaskRegistry, TaskStatus, TaskType, new_task_id

__all__ = ["FINAL_STATUSES", "Task", "TaskRegistry", "TaskStatus", "TaskType", "new_task_id"]
