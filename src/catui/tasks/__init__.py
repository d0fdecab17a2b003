"""Background tasks (shell commands and agents), the registry that tracks them, and their notifications."""

from typing import TYPE_CHECKING

from catui.lazy import lazy_exports

if TYPE_CHECKING:
    from catui.tasks.model import FINAL_STATUSES, Task, TaskStatus, TaskType, new_task_id
    from catui.tasks.notifications import NotificationBox, TaskNotification, format_task_notification
    from catui.tasks.registry import TaskRegistry

# lazy (catui.lazy): importing one submodule must not import its siblings
__getattr__ = lazy_exports(__name__, {
    "FINAL_STATUSES": "catui.tasks.model",
    "Task": "catui.tasks.model",
    "TaskStatus": "catui.tasks.model",
    "TaskType": "catui.tasks.model",
    "new_task_id": "catui.tasks.model",
    "NotificationBox": "catui.tasks.notifications",
    "TaskNotification": "catui.tasks.notifications",
    "format_task_notification": "catui.tasks.notifications",
    "TaskRegistry": "catui.tasks.registry",
})

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
