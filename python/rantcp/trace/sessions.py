"""Reading a trace database back: sessions with their capture's tags as columns, and the
packet rows of one session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rantcp.trace.ingest import TraceInputError, reading


def sessions(db: str | Path | Any, where: str | None = None) -> Any:
    """All sessions (optionally filtered by an SQL `where` on the sessions columns) as a pandas
    DataFrame, with the capture's path and one column per tag."""
    with reading(db) as con:
        sql = "SELECT s.*, c.path FROM sessions s JOIN captures c USING (capture_id)"
        if where:
            sql += f" WHERE {where}"
        df = con.execute(sql + " ORDER BY s.session_id").df()
        tags = con.execute("SELECT capture_id, key, value FROM tags").df()
    if len(tags):
        wide = tags.pivot_table(index="capture_id", columns="key", values="value", aggfunc="first")
        wide.columns.name = None
        clash = [c for c in wide.columns if c in df.columns]
        wide = wide.rename(columns={c: f"tag_{c}" for c in clash})
        df = df.merge(wide, left_on="capture_id", right_index=True, how="left")
    return df


def packets(db: str | Path | Any, session_id: int) -> Any:
    """The packet rows (the `packets` view, flags as booleans) of one session, in capture order."""
    with reading(db) as con:
        n = con.execute("SELECT count(*) FROM sessions WHERE session_id = ?", [session_id]).fetchall()[0][0]
        if not n:
            raise TraceInputError(f"no session {session_id} in the database (see `rantcp trace sessions`)")
        return con.execute("SELECT * FROM packets WHERE session_id = ? ORDER BY frame", [session_id]).df()
