"""Type stubs for the native extension (PyO3). Times are integer nanoseconds."""

class ConfigError(ValueError):
    """A config field is missing, unknown, mistyped or out of range (one-line message)."""

def version() -> str: ...
def scenarios() -> list[tuple[str, str]]:
    """Built-in scenarios as (name, one-line description)."""
def builtin_toml(name: str) -> str:
    """The default TOML of a built-in scenario."""
def config_schema() -> str:
    """JSON Schema of the scenario configs, as JSON text."""
def validate(spec: str, overrides: list[tuple[str, str]] = ..., seed: int | None = None) -> str:
    """Validate `builtin:NAME` or a TOML path with overrides; returns the effective config as JSON."""

class Simulation:
    """One simulation run, advanced in steps."""

    def __init__(
        self,
        spec: str,
        overrides: list[tuple[str, str]] = ...,
        seed: int | None = None,
        out_dir: str | None = None,
    ) -> None: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def now_ns(self) -> int: ...
    @property
    def events(self) -> int: ...
    def config_json(self) -> str: ...
    def step(self, until_ns: int) -> int: ...
    def finish(self, wall_seconds: float) -> tuple[str, dict[str, dict[str, list[float] | list[int] | list[str]]]]: ...
