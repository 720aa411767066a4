"""Settings: provider, base URL, API key with 测试连接, a model per agent, the price table, the language.

One dialog sets up a provider from scratch (the first-run path): pick a preset, paste the key, press
测试连接 and read exactly what is wrong. OK validates everything first and then saves ``llm.json``
and ``app.json`` and the key (the OS keyring only), all through the settings controller; Cancel changes
nothing. 测试连接 is a job of the window's :class:`JobRunner` (the dialog's own without a window). The key
is never written to a settings file or logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.jobs import Job, JobRunner
from novel_desktop.controllers.settings_controller import (
    PRESETS,
    AgentRole,
    ConnectionResult,
    KeyringUnavailable,
    LLMError,
    LLMSettings,
    ModelPrice,
    base_url_problem,
    check_connection,
    default_models,
    get_preset,
    load_app_settings,
    load_settings,
    local_timeouts,
    parse_price_rows,
    save_keys,
    save_settings_and_language,
    stored_key,
)
from novel_desktop.i18n import ONE, join_list, tr, tr_phrase
from novel_desktop.ui.agent_names import ROLE_NAMES
from novel_desktop.ui.provider_notes import base_url_note, key_note, needs_key, with_note
from novel_desktop.ui.session_key import offer_session_key

log = logging.getLogger(__name__)

LANGUAGES: tuple[tuple[str, str], ...] = (("zh", "简体中文"), ("en", "English"))

#: Price table columns after the model id: the ModelPrice field and its header.
PRICE_FIELDS: tuple[tuple[str, str], ...] = (
    ("input", "输入"),
    ("output", "输出"),
    ("cache_write", "缓存写入"),
    ("cache_read", "缓存读取"),
)

#: The model the connection test calls: the one that writes every chapter.
TEST_ROLE = AgentRole.chapter_writer

_BOX = "QLabel {{ color: {}; background: {}; border: 1px solid {}; border-radius: 4px; padding: 6px 8px; }}"
_OK_STYLE = _BOX.format("#14532d", "#e9f7ec", "#8fd19e")
_BAD_STYLE = _BOX.format("#7f1d1d", "#fdecec", "#f5b5b5")
_BUSY_STYLE = _BOX.format("#1e3a8a", "#eef4ff", "#b6cdf7")
_NOTE_STYLE = "color: palette(dark);"


class SettingsDialog(QDialog):
    """Tabs 模型服务 / 模型 / 价格 / 界面; see the module docstring."""

    def __init__(self, parent: QWidget | None = None, *, jobs: JobRunner | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs or JobRunner(self)
        self.setWindowTitle(tr("设置"))
        self.setMinimumSize(760, 560)
        loaded = load_settings()
        self._settings: LLMSettings = loaded.settings
        self._app = load_app_settings()
        #: Keys as the author left them in this dialog, by provider (the field shows one provider's).
        self._keys: dict[str, str] = {}
        #: The keyring's key of each provider shown so far, to save only what changed.
        self._stored_keys: dict[str, str] = {}
        self._provider = self._settings.provider if self._settings.provider in PRESETS else "custom"
        #: The running (or last) 测试连接, kept so it can be awaited by tests and cancelled on close.
        self.connection_job: Job | None = None
        self.last_result: ConnectionResult | None = None

        outer = QVBoxLayout(self)
        if loaded.problem:
            banner = QLabel(loaded.problem)
            banner.setWordWrap(True)
            banner.setStyleSheet(_BAD_STYLE)
            outer.addWidget(banner)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_service_tab(), tr("模型服务"))
        self.tabs.addTab(self._build_models_tab(), tr("模型"))
        self.tabs.addTab(self._build_prices_tab(), tr("价格"))
        self.tabs.addTab(self._build_ui_tab(), tr("界面"))
        outer.addWidget(self.tabs, 1)

        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(_BAD_STYLE)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        outer.addWidget(self.error_label)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(tr("确定"))
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText(tr("取消"))
        outer.addWidget(self.buttons)

        self._connect()
        self._load_provider(self._provider, initial=True)

    @classmethod
    def edit(
        cls,
        parent: QWidget | None,
        on_done: Callable[[bool], None] | None = None,
        *,
        jobs: JobRunner | None = None,
    ) -> SettingsDialog:
        """Open the dialog window-modally (``open()``, no nested loop); ``on_done(True)`` when the author
        pressed OK and everything was saved, ``on_done(False)`` on Cancel. It deletes itself when closed."""
        dialog = cls(parent, jobs=jobs)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if on_done is not None:
            dialog.finished.connect(lambda code: on_done(code == QDialog.DialogCode.Accepted))
        dialog.open()
        return dialog

    # ------------------------------------------------------------------ building
    def _build_service_tab(self) -> QWidget:
        page = QWidget()
        outer = QVBoxLayout(page)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setVerticalSpacing(8)
        outer.addLayout(form)

        self.provider_combo = QComboBox()
        for preset in PRESETS.values():
            self.provider_combo.addItem(tr(preset.display_name), preset.id)
        form.addRow(tr("服务商"), self.provider_combo)

        self.base_url_edit = QLineEdit()
        self.base_url_edit.setPlaceholderText("https://api.anthropic.com")
        self.base_url_note = QLabel()
        self.base_url_note.setWordWrap(True)
        self.base_url_note.setStyleSheet(_NOTE_STYLE)
        form.addRow(tr("服务地址（Base URL）"), with_note(self.base_url_edit, self.base_url_note))

        key_row = QHBoxLayout()
        key_row.setContentsMargins(0, 0, 0, 0)
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setClearButtonEnabled(True)
        self.key_edit.setPlaceholderText(tr("粘贴服务商控制台中的 API Key"))
        self.show_key_button = QToolButton()
        self.show_key_button.setText(tr("显示"))
        self.show_key_button.setCheckable(True)
        self.show_key_button.setToolTip(tr("显示或隐藏 API Key"))
        key_row.addWidget(self.key_edit, 1)
        key_row.addWidget(self.show_key_button)
        key_box = QWidget()
        key_box.setLayout(key_row)
        self.key_note = QLabel()
        self.key_note.setWordWrap(True)
        self.key_note.setStyleSheet(_NOTE_STYLE)
        self.key_field = with_note(key_box, self.key_note)
        self._service_form = form
        form.addRow(tr("API Key"), self.key_field)

        outer.addSpacing(8)
        test_row = QHBoxLayout()
        self.test_button = QPushButton(tr("测试连接"))
        self.test_button.setToolTip(tr("用“章节写作”的模型发送一次很短的请求（最多 16 个 token）"))
        self.test_model_label = QLabel()
        self.test_model_label.setStyleSheet(_NOTE_STYLE)
        test_row.addWidget(self.test_button)
        test_row.addSpacing(6)
        test_row.addWidget(self.test_model_label, 1)
        outer.addLayout(test_row)
        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.hide()
        outer.addWidget(self.result_label)
        outer.addStretch(1)
        return page

    def _build_models_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        note = QLabel(
            tr("每个智能体调用的模型。模型名称须与服务商文档一致；更换服务商时可一键换成它的默认模型。")
        )
        note.setWordWrap(True)
        note.setStyleSheet(_NOTE_STYLE)
        layout.addWidget(note)
        self.models_table = QTableWidget(len(ROLE_NAMES), 2)
        self.models_table.setHorizontalHeaderLabels([tr("智能体"), tr("模型", ONE)])
        self.models_table.verticalHeader().setVisible(False)
        header = self.models_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        metrics = self.models_table.fontMetrics()
        widest = max(metrics.horizontalAdvance(tr(name)) for name in ROLE_NAMES.values())
        self.models_table.setColumnWidth(0, widest + 32)
        for row, (role, name) in enumerate(ROLE_NAMES.items()):
            item = QTableWidgetItem(tr(name))
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            item.setData(Qt.ItemDataRole.UserRole, role.value)
            self.models_table.setItem(row, 0, item)
            self.models_table.setItem(row, 1, QTableWidgetItem(self._settings.model_for(role)))
        layout.addWidget(self.models_table, 1)
        row_layout = QHBoxLayout()
        self.default_models_button = QPushButton(tr("使用所选服务商的默认模型"))
        row_layout.addWidget(self.default_models_button)
        row_layout.addStretch(1)
        layout.addLayout(row_layout)
        return page

    def _build_prices_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        note = QLabel(
            tr("单位：美元 / 百万 tokens。用于估算每章花费；表中没有的模型按 0 计费。价格以服务商官网为准。")
        )
        note.setWordWrap(True)
        note.setStyleSheet(_NOTE_STYLE)
        layout.addWidget(note)
        self.prices_table = QTableWidget(0, 1 + len(PRICE_FIELDS))
        self.prices_table.setHorizontalHeaderLabels(
            [tr("模型", ONE)] + [tr(label) for _, label in PRICE_FIELDS]
        )
        self.prices_table.verticalHeader().setVisible(False)
        self.prices_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.prices_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        metrics = self.prices_table.fontMetrics()
        for column, (_, label) in enumerate(PRICE_FIELDS, start=1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.prices_table.setColumnWidth(column, max(90, metrics.horizontalAdvance(tr(label)) + 28))
        for model, price in sorted(self._settings.prices.items()):
            self._add_price_row(model, price)
        layout.addWidget(self.prices_table, 1)
        self.missing_price_label = QLabel()
        self.missing_price_label.setWordWrap(True)
        self.missing_price_label.setStyleSheet("color: #a15c00;")
        layout.addWidget(self.missing_price_label)
        row_layout = QHBoxLayout()
        self.add_price_button = QPushButton(tr("添加模型"))
        self.remove_price_button = QPushButton(tr("删除所选"))
        row_layout.addWidget(self.add_price_button)
        row_layout.addWidget(self.remove_price_button)
        row_layout.addStretch(1)
        layout.addLayout(row_layout)
        return page

    def _build_ui_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.language_combo = QComboBox()
        self.language_combo.setMinimumWidth(220)
        for code, name in LANGUAGES:
            self.language_combo.addItem(name, code)
        self.language_combo.setCurrentIndex(max(0, self.language_combo.findData(self._app.language)))
        form.addRow(tr("界面语言"), self.language_combo)
        note = QLabel(tr("更改语言后，重新启动程序生效。"))
        note.setWordWrap(True)
        note.setStyleSheet(_NOTE_STYLE)
        form.addRow("", note)
        return page

    def _add_price_row(self, model: str, price: ModelPrice | None) -> int:
        row = self.prices_table.rowCount()
        self.prices_table.insertRow(row)
        self.prices_table.setItem(row, 0, QTableWidgetItem(model))
        for column, (field, _) in enumerate(PRICE_FIELDS, start=1):
            value = "" if price is None else f"{getattr(price, field):g}"
            item = QTableWidgetItem(value)
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.prices_table.setItem(row, column, item)
        return row

    def _connect(self) -> None:
        self.provider_combo.currentIndexChanged.connect(self._on_provider_combo_changed)
        self.show_key_button.toggled.connect(self._on_show_key_toggled)
        self.test_button.clicked.connect(self._on_test_button_clicked)
        self.default_models_button.clicked.connect(self._on_default_models_clicked)
        self.models_table.itemChanged.connect(self._on_models_table_changed)
        self.prices_table.itemChanged.connect(self._on_models_table_changed)
        self.add_price_button.clicked.connect(self._on_add_price_clicked)
        self.remove_price_button.clicked.connect(self._on_remove_price_clicked)
        self.buttons.accepted.connect(self._on_buttons_accepted)
        self.buttons.rejected.connect(self.reject)

    # ------------------------------------------------------------------ reading the form
    @property
    def provider(self) -> str:
        return str(self.provider_combo.currentData())

    def models(self) -> dict[AgentRole, str]:
        """Role → model id as the table shows it (stripped)."""
        out: dict[AgentRole, str] = {}
        for row in range(self.models_table.rowCount()):
            role = list(ROLE_NAMES)[row]
            item = self.models_table.item(row, 1)
            out[role] = item.text().strip() if item else ""
        return out

    def set_model(self, role: AgentRole, model: str) -> None:
        """Put ``model`` in the role's cell (as if typed)."""
        self.models_table.setItem(list(ROLE_NAMES).index(role), 1, QTableWidgetItem(model))

    def _cell(self, row: int, column: int) -> str:
        item = self.prices_table.item(row, column)
        return item.text().strip() if item else ""

    def _price_rows(self) -> tuple[dict[str, ModelPrice], str | None, int]:
        """The price table parsed, or the first problem in it (Chinese) and its row."""
        columns = range(1 + len(PRICE_FIELDS))
        rows = [[self._cell(row, c) for c in columns] for row in range(self.prices_table.rowCount())]
        return parse_price_rows(rows, PRICE_FIELDS)

    def _collect(self) -> LLMSettings | None:
        """The settings the form describes, or None after showing what is wrong."""
        url = self.base_url_edit.text().strip()
        problem = base_url_problem(url)
        if problem:
            self._show_error(problem, tab=0, focus=self.base_url_edit)
            return None
        models = self.models()
        for row, (role, model) in enumerate(models.items()):
            if not model or any(ch.isspace() for ch in model):
                message = (
                    tr("“{role}”的模型名称不能为空。")
                    if not model
                    else tr("“{role}”的模型名称“{model}”中不能有空格。")
                ).format(role=tr(ROLE_NAMES[role]), model=model)
                self._show_error(message, tab=1)
                self.models_table.setCurrentCell(row, 1)
                return None
        prices, price_problem, bad_row = self._price_rows()
        if price_problem:
            self._show_error(price_problem, tab=2)
            self.prices_table.setCurrentCell(bad_row, 0)
            return None
        preset = get_preset(self.provider)
        data: dict[str, Any] = self._settings.model_dump()
        data.update(
            provider=self.provider,
            # The preset's own address is stored as "none", so a corrected preset URL reaches old users.
            base_url=None if url.rstrip("/") == preset.base_url.rstrip("/") else url,
            models={role.value: model for role, model in models.items()},
            prices={model: price.model_dump() for model, price in prices.items()},
        )
        if preset.local and self._settings.provider != preset.id:
            data = local_timeouts(data)  # a local model may need minutes where a cloud one needs seconds
        return LLMSettings.model_validate(data)

    def _show_error(self, message: str, *, tab: int | None = None, focus: QWidget | None = None) -> None:
        self.error_label.setText(message)
        self.error_label.show()
        if tab is not None:
            self.tabs.setCurrentIndex(tab)
        if focus is not None:
            focus.setFocus()

    # ------------------------------------------------------------------ provider and key
    def _stored_key(self, provider: str) -> str:
        if provider not in self._stored_keys:
            # Only the keyring's key is shown: a key from the environment is not the dialog's to edit. A local
            # server has none: its keyring entry is never read.
            self._stored_keys[provider] = stored_key(provider) if needs_key(provider) else ""
        return self._stored_keys[provider]

    def _load_provider(self, provider: str, *, initial: bool = False) -> None:
        preset = get_preset(provider)
        self.provider_combo.blockSignals(True)
        self.provider_combo.setCurrentIndex(max(0, self.provider_combo.findData(preset.id)))
        self.provider_combo.blockSignals(False)
        if initial:
            self.base_url_edit.setText(self._settings.base_url or preset.base_url)
        self.key_edit.setText(self._keys.get(provider, self._stored_key(provider)))
        self._update_notes()

    def _update_notes(self) -> None:
        self.base_url_note.setText(base_url_note(self.provider))
        # A local model server checks no key: no key row at all.
        self._service_form.setRowVisible(self.key_field, needs_key(self.provider))
        self.key_note.setText(key_note(self.provider))
        model = self.models().get(TEST_ROLE, "")
        self.test_model_label.setText(
            tr("将调用“{role}”的模型 {model}").format(role=tr(ROLE_NAMES[TEST_ROLE]), model=model or "—")
        )
        known = set()
        for row in range(self.prices_table.rowCount()):
            known.add(self._cell(row, 0))
        # A local model costs nothing: no price to miss.
        missing = sorted(
            {m for m in self.models().values() if m and m not in known and needs_key(self.provider)}
        )
        self.missing_price_label.setText(
            tr("这些模型没有价格，花费会按 0 计：{models}").format(models=join_list(missing))
            if missing
            else ""
        )
        self.missing_price_label.setVisible(bool(missing))

    def _on_provider_combo_changed(self, _index: int) -> None:
        old, new = self._provider, self.provider
        if old == new:
            return
        self._keys[old] = self.key_edit.text().strip()
        old_preset, new_preset = get_preset(old), get_preset(new)
        # An address the author did not change follows the preset; a typed one stays.
        if self.base_url_edit.text().strip().rstrip("/") in ("", old_preset.base_url.rstrip("/")):
            self.base_url_edit.setText(new_preset.base_url)
        # Likewise the models: another provider's defaults are useless, the author's own choice is not.
        if self.models() == default_models(old):
            self._fill_models(default_models(new))
        self._provider = new
        self._load_provider(new)
        self._clear_result()

    def _fill_models(self, models: dict[AgentRole, str]) -> None:
        for role, model in models.items():
            self.set_model(role, model)

    def _on_default_models_clicked(self) -> None:
        self._fill_models(default_models(self.provider))

    def _on_models_table_changed(self, _item: QTableWidgetItem) -> None:
        self._update_notes()

    def _on_show_key_toggled(self, shown: bool) -> None:
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self.show_key_button.setText(tr("隐藏") if shown else tr("显示"))

    def _on_add_price_clicked(self) -> None:
        row = self._add_price_row("", None)
        self.prices_table.setCurrentCell(row, 0)
        item = self.prices_table.item(row, 0)
        if item is not None:
            self.prices_table.editItem(item)

    def _on_remove_price_clicked(self) -> None:
        rows = sorted({index.row() for index in self.prices_table.selectedIndexes()}, reverse=True)
        for row in rows:
            self.prices_table.removeRow(row)
        self._update_notes()

    # ------------------------------------------------------------------ 测试连接
    def _on_test_button_clicked(self) -> None:
        if self.connection_job is not None and self.connection_job.running:
            return
        self.connection_job = self.jobs.run(
            "connection_test", lambda _job: self.run_connection_test(), title=tr("测试连接")
        )

    async def run_connection_test(self) -> ConnectionResult:
        """Test the provider, address, key and model the form shows; the result is shown and returned."""
        url = self.base_url_edit.text().strip()
        model = self.models().get(TEST_ROLE, "")
        self.test_button.setEnabled(False)
        self.test_button.setText(tr("正在测试…"))
        self._show_result(tr("正在连接 {url}，调用模型 {model}…").format(url=url, model=model), _BUSY_STYLE)
        try:
            result = await check_connection(
                self._settings,
                provider=self.provider,
                base_url=url,
                api_key=self.key_edit.text(),
                model=model,
            )
        finally:
            self.test_button.setEnabled(True)
            self.test_button.setText(tr("测试连接"))
        self.last_result = result
        mark = "✓ " if result.ok else "✗ "
        self._show_result(mark + result.message, _OK_STYLE if result.ok else _BAD_STYLE)
        return result

    def _show_result(self, text: str, style: str) -> None:
        self.result_label.setText(text)
        self.result_label.setStyleSheet(style)
        self.result_label.show()

    def _clear_result(self) -> None:
        self.result_label.clear()
        self.result_label.hide()

    def _cancel_test(self) -> None:
        if self.connection_job is not None:
            self.connection_job.cancel()

    # ------------------------------------------------------------------ OK / Cancel
    def _on_buttons_accepted(self) -> None:
        if self.save():
            self.accept()

    def save(self) -> bool:
        """Validate and save everything; False (with the reason shown) when nothing was saved."""
        self.error_label.hide()
        settings = self._collect()
        if settings is None:
            return False
        self._keys[self.provider] = self.key_edit.text().strip()
        # The key first: if the keyring refuses it, nothing else is saved and the author can react.
        try:
            for provider in self._keys:
                self._stored_key(provider)
            save_keys(self._keys, self._stored_keys)
        except LLMError as error:
            self._show_error(
                tr_phrase(error.message_phrase) + tr("（也可清空 API Key 后按“确定”，先保存其他设置。）"),
                tab=0,
                focus=self.key_edit,
            )
            if isinstance(error, KeyringUnavailable):
                offer_session_key(self, self._keep_for_session)
            return False
        return self._save_settings(settings)

    def _keep_for_session(self) -> None:
        save_keys(self._keys, self._stored_keys, session_only=True)
        settings = self._collect()
        if settings is not None and self._save_settings(settings):
            self.accept()

    def _save_settings(self, settings: LLMSettings) -> bool:
        try:
            save_settings_and_language(settings, str(self.language_combo.currentData()))
        except OSError as exc:
            self._show_error(
                tr("无法写入设置文件（{error}）：请检查设置文件夹的权限与磁盘空间。").format(
                    error=exc.strerror or exc.__class__.__name__
                )
            )
            return False
        self._settings = settings
        log.info("settings saved: provider=%s", settings.provider)
        return True

    def done(self, result: int) -> None:
        self._cancel_test()
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._cancel_test()
        super().closeEvent(event)
