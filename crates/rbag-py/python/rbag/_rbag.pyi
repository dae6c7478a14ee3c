"""The native module of the ``rbag`` package (see ``rbag``)."""

import os
from types import TracebackType
from numpy.typing import NDArray
from typing import Any, Dict, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, Type, Union, final

__version__: str
__all__ = [
    "ClosedError",
    "Connection",
    "DecodeError",
    "Error",
    "InternalError",
    "Message",
    "Messages",
    "Msg",
    "Reader",
    "StorageError",
    "Topic",
    "TopicError",
    "Writer",
    "__version__",
    "_plan",
]

class Error(Exception):
    """Anything rbag fails with. The message names the file, offset, record, topic or field at fault."""

class StorageError(Error):
    """A bag could not be read or written: a damaged or missing file, an output that exists."""

class DecodeError(Error):
    """A message could not be decoded or encoded with its type."""

class TopicError(Error):
    """A topic or field asked for is not in the bag; the message lists those that are."""

class ClosedError(Error):
    """The reader or writer was closed."""

class InternalError(Error):
    """A bug in rbag, caught before it could reach Python; the interpreter and later calls are unaffected."""

@final
class Msg:
    """A decoded message: fields as attributes."""

    @property
    def _type(self) -> str: ...
    @property
    def _fields(self) -> Tuple[str, ...]: ...
    def __getattr__(self, name: str) -> Any: ...
    def __dir__(self) -> Tuple[str, ...]: ...  # type: ignore[override]
    def to_dict(self) -> Dict[str, Any]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __len__(self) -> int: ...

@final
class Topic:
    """A topic of a bag."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def count(self) -> int: ...
    @property
    def encoding(self) -> str: ...
    @property
    def connections(self) -> int: ...
    @property
    def frequency(self) -> Optional[float]: ...
    @property
    def definition(self) -> str: ...
    @property
    def qos(self) -> Optional[str]: ...

@final
class Connection:
    """A connection: one publisher of a ROS 1 bag, an MCAP channel, a rosbag2 topic."""

    @property
    def bag(self) -> int: ...
    @property
    def id(self) -> int: ...
    @property
    def topic(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def encoding(self) -> str: ...
    @property
    def definition(self) -> str: ...
    @property
    def definition_encoding(self) -> str: ...
    @property
    def metadata(self) -> Dict[str, str]: ...

@final
class Message:
    """One message of a bag."""

    @property
    def topic(self) -> str: ...
    @property
    def log_time(self) -> int: ...
    @property
    def publish_time(self) -> int: ...
    @property
    def data(self) -> memoryview: ...
    @property
    def message(self) -> Optional[Msg]: ...
    @property
    def connection(self) -> Connection: ...
    @property
    def type(self) -> str: ...

@final
class Messages(Iterator[Message]):
    """An iterator over a bag's messages, from ``Reader.messages``."""

    def __iter__(self) -> "Messages": ...
    def __next__(self) -> Message: ...

@final
class Reader:
    """A bag opened for reading: a ROS 1 ``.bag``, a rosbag2 directory, or a ``.db3``/``.mcap`` file."""

    def __new__(
        cls,
        path: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
        *,
        msg_path: Optional[Sequence[str]] = None,
        lenient: bool = False,
        allow_remote_scan: bool = False,
    ) -> "Reader": ...
    def __enter__(self) -> "Reader": ...
    def __exit__(self, *_exc: object) -> bool: ...
    def close(self) -> None: ...
    def stats(self) -> Dict[str, int]: ...
    @property
    def path(self) -> str: ...
    @property
    def paths(self) -> List[str]: ...
    @property
    def topics(self) -> Dict[str, Topic]: ...
    @property
    def connections(self) -> List[Connection]: ...
    @property
    def start(self) -> Optional[int]: ...
    @property
    def end(self) -> Optional[int]: ...
    @property
    def duration(self) -> int: ...
    @property
    def message_count(self) -> int: ...
    @property
    def info(self) -> Any: ...
    def messages(
        self,
        topics: Union[str, Sequence[str], None] = None,
        start: Optional[int] = None,
        end: Optional[int] = None,
        raw: bool = False,
        dialect: Optional[str] = None,
    ) -> Messages: ...
    def to_arrow(
        self,
        topic: str,
        columns: Optional[Sequence[str]] = None,
        start: Optional[int] = None,
        end: Optional[int] = None,
    ) -> Any:
        """One topic as a ``pyarrow.Table`` (typed ``Any``: pyarrow ships no type hints)."""
    def to_pandas(
        self,
        topic: str,
        columns: Optional[Sequence[str]] = None,
        start: Optional[int] = None,
        end: Optional[int] = None,
    ) -> Any:
        """``to_arrow`` as a ``pandas.DataFrame`` indexed by ``log_time``."""
    def to_numpy(
        self,
        topic: str,
        field: str,
        start: Optional[int] = None,
        end: Optional[int] = None,
    ) -> NDArray[Any]: ...
    def _genpy_messages(
        self,
        topics: Union[str, Sequence[str], None],
        start: Optional[int],
        end: Optional[int],
        make_class: Any,
        time: Any,
        duration: Any,
    ) -> Messages: ...

@final
class Writer:
    """A bag being written; it appears at its path only once closed."""

    def __new__(
        cls,
        path: Union[str, "os.PathLike[str]"],
        storage: Optional[str] = None,
        compression: Optional[str] = None,
        *,
        overwrite: bool = False,
        msg_path: Optional[Sequence[str]] = None,
        direct_io: Union[bool, Literal["require"], None] = None,
    ) -> "Writer": ...
    def add_connection(
        self,
        topic: str,
        type: str,
        *,
        definition: Optional[str] = None,
        encoding: Optional[str] = None,
        definition_encoding: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> int: ...
    def write(
        self,
        connection: int,
        log_time: int,
        data: Union[bytes, Mapping[str, Any], Msg, Any],
        publish_time: Optional[int] = None,
    ) -> None: ...
    def close(self) -> None: ...
    def abandon(self) -> None: ...
    def __enter__(self) -> "Writer": ...
    def __exit__(
        self,
        *exc: Union[Optional[Type[BaseException]], Optional[BaseException], Optional[TracebackType]],
    ) -> bool: ...

def _plan(
    bags: List[str],
    topics: Optional[List[str]],
    start: Optional[int],
    end: Optional[int],
    target_bytes: int,
) -> List[Dict[str, Any]]: ...
