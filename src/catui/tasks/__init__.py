"""Background tasks (shell commands and agents), the registry that tracks them, and their notifications."""

from catui.tasks.model import FINAL_STATUSES, Task, TaskStatus, TaskType, new_task_id
from catui.tasks.notifications import NotificationBox, TaskNotification, format_task_notification
from catui.tasks.registry import TaskRegistry

__all__ = [
    "FINAL_STATUSES",
    "NotificationBox",
    "Task",
    "TaskNotification",
    "TaskRegistry",
    "TaskStatus",
    "TaskType",
    "format_task_notification",
    "new_task_id",
]
