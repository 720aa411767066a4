"""The composition root: one open novel with everything that works on it, built once.

A :class:`NovelSession` holds the store, the LLM settings, the LLM client, the agents and the interaction
manager of one novel. The CLI and the GUI both get them here, so there is one place that decides how a client
is configured and which agents the pipeline runs with. Everything is built on first use: opening a novel to
show its status never imports the anthropic SDK (over a second) nor builds a client.

Typical uses::

    session = NovelSession.open("青石问道.novel", responder=TerminalResponder())
    try:
        session.run(lambda s: ChapterPipeline(s.store, s.agents.chapter, s.interaction).run_chapter())
    finally:
        session.close()

    async with NovelSession(store, settings=settings, http_client=http) as session:  # the window, per run
        await rebuild_from(session.store, session.agents.chapter, chapter)

:func:`build_client` is the only place outside ``llm/`` that constructs an :class:`LLMClient`; the connection
test uses it directly, with the values the author typed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from novel_desktop.domain.ledger import ModelCall, current_attribution, default_purpose
from novel_desktop.llm.client import CallHook, LLMClient, LLMResponse, PromptBlock
from novel_desktop.llm.roles import AgentRole
from novel_desktop.llm.settings import LLMSettings, load_settings
from novel_desktop.llm.usage import CallEvent
from novel_desktop.pipeline.interaction import InteractionManager, Responder
from novel_desktop.storage.store import NovelStore

if TYPE_CHECKING:
    import httpx2

    from novel_desktop.agents.adopt import LLMAdoptAgents
    from novel_desktop.agents.chapter import LLMChapterAgents
    from novel_desktop.agents.judge import LLMJudgeAgent
    from novel_desktop.agents.planning import LLMPlanningAgents

T = TypeVar("T")

log = logging.getLogger(__name__)


def build_client(
    settings: LLMSettings,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    http_client: httpx2.AsyncClient | None = None,
    on_call: CallHook | None = None,
) -> LLMClient:
    """The LLM client for ``settings``. ``api_key``/``base_url`` override the keyring/environment and the
    settings (the connection test passes what the author typed; tests pass the fake server);
    ``http_client`` is an ``httpx2.AsyncClient`` (the window builds one in a worker thread); ``on_call`` is
    the client's ledger hook. Constructing it is cheap: the SDK is imported and the connection opened on the
    first call."""
    return LLMClient(settings, api_key=api_key, base_url=base_url, http_client=http_client, on_call=on_call)


async def probe_connection(
    settings: LLMSettings,
    role: AgentRole,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    max_tokens: int = 16,
    timeout: float | None = None,
) -> LLMResponse:
    """One tiny real call to ``role``'s model (the settings dialog's connection test), through a client of
    its own (:func:`build_client`) that is closed afterwards. Raises the client's ``LLMError`` subclasses."""
    client = build_client(settings, api_key=api_key, base_url=base_url)
    try:
        return await client.stream(
            role,
            system=[PromptBlock("这是一次连接测试。")],
            messages=[{"role": "user", "content": "请只回复一个字：好"}],
            max_tokens=max_tokens,
            timeout=timeout,
        )
    finally:
        await client.aclose()


@dataclass(frozen=True)
class SessionAgents:
    """The agents of one session, all over the session's one client."""

    #: ChapterWriter, Summarizer, StyleRefiner, QualityJudge for the chapter pipeline (``ChapterAgents``).
    chapter: LLMChapterAgents
    #: WorldBuilder, CharacterWeaver, PlotArchitect, StyleAnalyzer, ConsistencyAuditor (``PlanningAgents``).
    planning: LLMPlanningAgents
    #: QualityJudge on demand: re-judging committed chapters, one or a batch (``JudgeAgent``).
    judge: LLMJudgeAgent
    #: The book reader and the book synthesis of 接续已有书稿 (``AdoptAgents``).
    adopt: LLMAdoptAgents


class NovelSession:
    """One open novel and what works on it: store, settings, client, agents, interaction manager.

    ``NovelSession(store, ...)`` wraps a store opened elsewhere (it is not closed by the session);
    :meth:`open` opens one and owns it. ``settings`` default to the saved settings (loaded on first use,
    :attr:`settings_problem` says why they could not be read); ``responder`` answers the pipeline's
    questions (None: the GUI pulls them with ``interaction.wait_next_request()``); ``api_key``, ``base_url``
    and ``http_client`` go to :func:`build_client`.
    """

    def __init__(
        self,
        store: NovelStore,
        *,
        settings: LLMSettings | None = None,
        responder: Responder | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        owns_store: bool = False,
    ) -> None:
        self.store = store
        self._settings = settings
        self._settings_problem: str | None = None
        self._responder = responder
        self._api_key = api_key
        self._base_url = base_url
        self._http_client = http_client
        self._owns_store = owns_store
        self._client: LLMClient | None = None
        self._agents: SessionAgents | None = None
        self._interaction: InteractionManager | None = None
        self._closed = False
        # The ledger row of each call whose stream started and has not ended (by call id): the write its start
        # made, a task giving the row's id and chapter.
        self._open_calls: dict[int, asyncio.Task[tuple[int, int | None]]] = {}

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        write: bool = True,
        settings: LLMSettings | None = None,
        responder: Responder | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> NovelSession:
        """Open the novel at ``path`` (``write=True`` takes the single-writer lock) as a session that owns
        the store. Raises what :meth:`NovelStore.open` raises: ``StoreError``, ``SchemaError``,
        ``lock.ProjectLocked``."""
        store = NovelStore.open(path, write=write)
        return cls(
            store,
            settings=settings,
            responder=responder,
            api_key=api_key,
            base_url=base_url,
            http_client=http_client,
            owns_store=True,
        )

    @classmethod
    def create(
        cls,
        path: str | Path,
        *,
        title: str,
        genre: str | None = None,
        platform: str = "web",
        settings: LLMSettings | None = None,
        responder: Responder | None = None,
    ) -> NovelSession:
        """Create a new novel file at ``path`` (never overwriting one) and open it, for writing, as a session
        that owns the store. Raises ``StoreError`` (the file exists, an empty title, an unknown platform)."""
        from novel_desktop.analysis.blacklist import initial_documents

        store = NovelStore.create(
            path, title=title, genre=genre, platform=platform, documents=initial_documents()
        )
        return cls(store, settings=settings, responder=responder, owns_store=True)

    # ------------------------------------------------------------------ what the session builds, once
    @property
    def settings(self) -> LLMSettings:
        """The LLM settings: as given, else the saved ones (read once)."""
        if self._settings is None:
            loaded = load_settings()
            self._settings, self._settings_problem = loaded.settings, loaded.problem
        return self._settings

    @property
    def settings_problem(self) -> str | None:
        """Why the saved settings could not be used (defaults were), or None."""
        _ = self.settings
        return self._settings_problem

    @property
    def client(self) -> LLMClient:
        """The session's one LLM client, built on first use."""
        if self._closed:
            raise RuntimeError("the session is closed")
        if self._client is None:
            self._client = build_client(
                self.settings,
                api_key=self._api_key,
                base_url=self._base_url,
                http_client=self._http_client,
                on_call=self._on_call,
            )
        return self._client

    async def _on_call(self, event: CallEvent) -> None:
        """The client's hook: every call goes into the novel's cost ledger (a row when its stream starts,
        completed when it ends), and a live view watching the calls (``attributed(watch=...)``) sees it."""
        attribution = current_attribution()
        if attribution.watch is not None:
            try:
                attribution.watch(event)
            except Exception:
                log.warning("a call watcher failed", exc_info=True)
        if event.phase == "progress" or not self.store.writable:
            return
        call = ModelCall(
            role=event.role,
            model=event.model,
            purpose=attribution.purpose_now or default_purpose(event.role),
            # A row left "interrupted" is a call whose process died before it ended.
            status="interrupted" if event.phase == "start" else event.status,
            chapter=attribution.chapter,
            input_tokens=event.usage.input_tokens,
            output_tokens=event.usage.output_tokens,
            cache_creation_input_tokens=event.usage.cache_creation_input_tokens,
            cache_read_input_tokens=event.usage.cache_read_input_tokens,
            cost_usd=event.cost_usd,
            duration_ms=event.duration_ms,
            attempts=event.attempts,
        )
        # The write is a task of its own, known before it ends, and never cancelled with the call: a cancel
        # landing while the start's row is written must not lose that row, or the call's end would write a
        # second one beside it, left "interrupted" (an early draft thrown away mid-stream counted twice).
        write = asyncio.ensure_future(self._write_call(call, self._open_calls.pop(event.call_id, None)))
        if event.phase == "start":
            self._open_calls[event.call_id] = write
        await asyncio.shield(write)

    async def _write_call(
        self, call: ModelCall, opened: asyncio.Task[tuple[int, int | None]] | None
    ) -> tuple[int, int | None]:
        """Write ``call`` over the row its start wrote (``opened``, once that write is done) or as a new row;
        return the row's id and chapter."""
        row_id: int | None = None
        if opened is not None:
            try:
                row_id, chapter = await opened
            except Exception:
                log.warning("a model call's first ledger write failed", exc_info=True)
            else:
                call = replace(call, chapter=chapter)
        return await asyncio.to_thread(self._record_call, call, row_id)

    def _record_call(self, call: ModelCall, row_id: int | None) -> tuple[int, int | None]:
        if call.chapter is None and row_id is None:
            # Nobody named the chapter: the one the checkpoint has in flight, if any.
            cp = self.store.checkpoint()
            inflight = cp.get("inflight_chapter")
            if isinstance(inflight, int) and cp.get("pipeline_stage") not in (None, "committed"):
                call = replace(call, chapter=inflight)
        return self.store.record_model_call(call, row_id), call.chapter

    @property
    def agents(self) -> SessionAgents:
        """The agents over :attr:`client`, built on first use."""
        if self._agents is None:
            from novel_desktop.agents.adopt import LLMAdoptAgents
            from novel_desktop.agents.chapter import LLMChapterAgents
            from novel_desktop.agents.judge import LLMJudgeAgent
            from novel_desktop.agents.planning import LLMPlanningAgents

            client = self.client
            self._agents = SessionAgents(
                chapter=LLMChapterAgents(self.store, client),
                planning=LLMPlanningAgents(client),
                judge=LLMJudgeAgent(self.store, client),
                adopt=LLMAdoptAgents(client),
            )
        return self._agents

    @property
    def interaction(self) -> InteractionManager:
        """The interaction manager the pipeline asks through (one pending question at a time)."""
        if self._interaction is None:
            self._interaction = InteractionManager(self._responder)
        return self._interaction

    async def reconfigure(
        self, settings: LLMSettings | None = None, *, http_client: httpx2.AsyncClient | None = None
    ) -> None:
        """Use new settings (None: read the saved ones again on next use) and, optionally, a new HTTP client:
        the current client is closed, and the next use of :attr:`client` or :attr:`agents` builds them anew.
        For a window that keeps one session open while the author edits the settings."""
        await self.aclose_client()
        self._settings, self._settings_problem = settings, None
        if http_client is not None:
            self._http_client = http_client

    # ------------------------------------------------------------------ running and closing
    def run(self, work: Callable[[NovelSession], Awaitable[T]]) -> T:
        """Run ``work(self)`` on a new event loop (the CLI's ``asyncio.run``); the client is closed after it,
        on the same loop. The store stays open."""

        async def main() -> T:
            try:
                return await work(self)
            finally:
                await self.aclose_client()

        return asyncio.run(main())

    async def aclose_client(self) -> None:
        """Close the client's connections (if it was built) and forget it and the agents over it."""
        client, self._client, self._agents = self._client, None, None
        if client is not None:
            await client.aclose()

    def close(self) -> None:
        """Close the store if the session opened it (idempotent). Close the client first (:meth:`aclose`)."""
        if self._owns_store and not self._closed:
            self.store.close()
        self._closed = True

    async def aclose(self) -> None:
        """Close the client, then the store if the session opened it (idempotent)."""
        await self.aclose_client()
        self.close()

    async def __aenter__(self) -> NovelSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> NovelSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["NovelSession", "SessionAgents", "build_client", "probe_connection"]
