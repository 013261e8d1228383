"""All of nlmsync's memory: one SQLite file (`<vault>/.nlmsync/state.db`) through sqlite-utils."""
