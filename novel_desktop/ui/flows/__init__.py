"""The main window's flows, each a small class over the window: opening, creating and closing novels
(:mod:`.novels`), importing, exporting and dropping files (:mod:`.files`), and the pipeline's runs —
continue, rebuild, the lifecycle steps — with what the window says when they end (:mod:`.runs`).

A flow never blocks on a dialog inside a coroutine: slow work is a job of the window's JobRunner, its
result comes back through the job's signals (emitted outside the task), and messages and yes/no questions go
through :mod:`novel_desktop.ui.alerts`.
"""
