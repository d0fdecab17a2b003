"""Background tasks (shell commands and agents), the registry that tracks them, and their notifications."""

from catui.tasks.notifications import NotificationBox, TaskNotification, format_task_notification
from catui.tasks.registry import FINAL_STATUSES, Task, TaskRegistry, TaskStatus, TaskType, new_task_id

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
