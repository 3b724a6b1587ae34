//! `serve --mode h2`: an HTTP/2 origin with prior knowledge (h2c), for
//! tests of `server … proto h2`. Every answer is 200 with `x-method`,
//! `x-path`, `x-authority` and `x-body-len`; its body is `s=<size>` bytes
//! (`a`..`z` repeated) or the request body echoed; its trailers are the
//! request's trailers echoed plus `x-served: h2` (as gRPC servers end with
//! `grpc-status`).

use crate::server::{parse_size, query_param};
use bytes::Bytes;
use h2::server::SendResponse;
use h2::RecvStream;
use http::{HeaderMap, HeaderValue, Request, Response};
use tokio::net::TcpStream;

pub async fn serve(s: TcpStream) -> Result<(), h2::Error> {
    let mut conn = h2::server::handshake(s).await?;
    while let Some(r) = conn.accept().await {
        let (req, respond) = r?;
        tokio::spawn(async move {
            let _ = answer(req, respond).await;
        });
    }
    Ok(())
}

async fn answer(
    req: Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
) -> Result<(), h2::Error> {
    let (parts, mut body) = req.into_parts();
    let mut got = Vec::new();
    while let Some(d) = body.data().await {
        let d = d?;
        let _ = body.flow_control().release_capacity(d.len());
        got.extend_from_slice(&d);
    }
    let mut trailers = body.trailers().await?.unwrap_or_default();
    let pq = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let out: Vec<u8> = match query_param(&pq, "s").and_then(parse_size) {
        Some(n) => (0..n).map(|i| b'a' + (i % 26) as u8).collect(),
        None => got.clone(),
    };
    let mut res = Response::builder()
        .status(200)
        .header("x-method", parts.method.as_str())
        .header("x-path", pq.as_str())
        .header(
            "x-authority",
            parts.uri.authority().map_or("", |a| a.as_str()),
        )
        .header("x-body-len", got.len().to_string())
        .body(())
        .unwrap_or_default();
    if let Some(ct) = parts.headers.get("content-type") {
        res.headers_mut().insert("content-type", ct.clone());
    }
    let mut send = respond.send_response(res, false)?;
    for c in out.chunks(16384) {
        send.reserve_capacity(c.len());
        send.send_data(Bytes::copy_from_slice(c), false)?;
    }
    trailers.insert("x-served", HeaderValue::from_static("h2"));
    send_trailers(send, trailers)
}

fn send_trailers(mut send: h2::SendStream<Bytes>, t: HeaderMap) -> Result<(), h2::Error> {
    send.send_trailers(t)
}
