//! The stdio transport: one JSON-RPC message per line each way. Unlike rmcp's, which drops a
//! line that is not JSON without a word, it answers every line that is not a message with the
//! JSON-RPC error for it ([`crate::jsonrpc::read_message`]); the answer is itself a valid
//! message, so a client cannot bounce it back as garbage.

use std::io;

use futures::StreamExt;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, FramedRead};

use crate::jsonrpc::read_message;

/// The longest line read (the arguments of a call are checked against
/// [`crate::MAX_REQUEST_BYTES`] once read, with a clearer error).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Messages in on `read`, out on `write`. Writes go through one task, whole lines at a time,
/// so an error answered while reading never lands inside a response being written.
pub struct LineTransport<R> {
    lines: FramedRead<R, Lines>,
    out: Option<mpsc::UnboundedSender<String>>,
    writer: Option<JoinHandle<io::Result<()>>>,
}

impl<R: AsyncRead + Unpin + Send + 'static> LineTransport<R> {
    /// A transport over `read` and `write` (must be called on a Tokio runtime).
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(read: R, write: W) -> Self {
        let (out, lines_out) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_lines(write, lines_out));
        let lines = FramedRead::new(read, Lines::new(MAX_LINE_BYTES));
        LineTransport { lines, out: Some(out), writer: Some(writer) }
    }

    fn queue(&self, message: &ServerJsonRpcMessage) -> io::Result<()> {
        let line = serde_json::to_string(message)?;
        let closed = || io::Error::new(io::ErrorKind::BrokenPipe, "the output is closed");
        self.out.as_ref().ok_or_else(closed)?.send(line).map_err(|_| closed())
    }

    /// Answers a line that is not a message. Failing to is not worth ending the session: the
    /// next response would fail the same way and end it.
    fn refuse(&self, error: rmcp::ErrorData) {
        if let Err(e) = self.queue(&ServerJsonRpcMessage::error(error, None)) {
            tracing::debug!("could not answer a malformed message: {e}");
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut write: W,
    mut lines: mpsc::UnboundedReceiver<String>,
) -> io::Result<()> {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        write.write_all(line.as_bytes()).await?;
        write.flush().await?;
    }
    Ok(())
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(&mut self, item: ServerJsonRpcMessage) -> impl Future<Output = io::Result<()>> + Send + 'static {
        std::future::ready(self.queue(&item))
    }

    /// The next message; lines that are not one are answered here and skipped. Cancel-safe:
    /// a line is taken off the input only when it is complete.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let line = match self.lines.next().await? {
                Ok(Line::Text(line)) => line,
                Ok(Line::TooLong) => {
                    self.refuse(rmcp::ErrorData::invalid_request(
                        format!("a message is at most {MAX_LINE_BYTES} bytes"),
                        None,
                    ));
                    continue;
                }
                Err(e) => {
                    tracing::error!("cannot read the input: {e}");
                    return None;
                }
            };
            let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&line[..]); // RFC 8259 §8.1
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match read_message(line) {
                Ok(message) => return Some(message),
                Err(error) => self.refuse(error),
            }
        }
    }

    /// Stops writing once every queued message is out.
    async fn close(&mut self) -> io::Result<()> {
        self.out = None;
        match self.writer.take() {
            Some(writer) => writer.await.map_err(io::Error::other)?,
            None => Ok(()),
        }
    }
}

/// A line of input, without its line break.
#[derive(Debug, PartialEq)]
enum Line {
    Text(BytesMut),
    /// Longer than the limit: dropped as it came in, never held whole.
    TooLong,
}

/// Splits input into lines of at most `max` bytes, and goes on after a longer one (tokio's
/// `LinesCodec` ends the stream at its first error, and insists on UTF-8 before JSON does).
struct Lines {
    max: usize,
    /// How far the buffer is known to hold no line break.
    searched: usize,
    /// Inside a line over the limit, dropping it until its end.
    discarding: bool,
}

impl Lines {
    fn new(max: usize) -> Lines {
        Lines { max, searched: 0, discarding: false }
    }
}

impl Decoder for Lines {
    type Item = Line;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        let Some(end) = buf[self.searched..].iter().position(|b| *b == b'\n').map(|i| i + self.searched) else {
            if self.discarding || buf.len() > self.max {
                buf.clear();
                self.discarding = true;
            }
            self.searched = buf.len();
            return Ok(None);
        };
        self.searched = 0;
        if std::mem::take(&mut self.discarding) || end > self.max {
            buf.advance(end + 1);
            return Ok(Some(Line::TooLong));
        }
        let mut line = buf.split_to(end + 1);
        line.truncate(if line.ends_with(b"\r\n") { end - 1 } else { end });
        Ok(Some(Line::Text(line)))
    }

    /// A last line without a line break is still a line.
    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        if std::mem::take(&mut self.discarding) {
            return Ok(Some(Line::TooLong));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        self.searched = 0;
        Ok(Some(Line::Text(buf.split())))
    }
}

#[cfg(test)]
mod tests {
    use tokio_util::bytes::BytesMut;
    use tokio_util::codec::Decoder;

    use super::{Line, Lines};

    /// The lines `input` splits into, fed `chunk` bytes at a time.
    fn check(input: &str, chunk: usize, expect: &[Option<&str>]) {
        let mut codec = Lines::new(8);
        let (mut buf, mut got) = (BytesMut::new(), vec![]);
        for piece in input.as_bytes().chunks(chunk) {
            buf.extend_from_slice(piece);
            while let Some(line) = codec.decode(&mut buf).unwrap() {
                got.push(line);
            }
        }
        while let Some(line) = codec.decode_eof(&mut buf).unwrap() {
            got.push(line);
        }
        let expect: Vec<Line> =
            expect.iter().map(|l| l.map_or(Line::TooLong, |t| Line::Text(BytesMut::from(t.as_bytes())))).collect();
        assert_eq!(got, expect, "{input:?} in chunks of {chunk}");
    }

    #[test]
    fn input_splits_into_lines_and_goes_on_after_one_too_long() {
        for chunk in [1, 3, 100] {
            check("a\nbb\r\n\nccc", chunk, &[Some("a"), Some("bb"), Some(""), Some("ccc")]);
            check("short\nthis one is too long\nok\n", chunk, &[Some("short"), None, Some("ok")]);
            check("12345678\n123456789\n", chunk, &[Some("12345678"), None]);
            check("ok\nno end and too long", chunk, &[Some("ok"), None]);
        }
    }
}
