"""OSWorld-format tasks on vdesk desktops: task files, setup steps, getters, metrics, results layout."""
