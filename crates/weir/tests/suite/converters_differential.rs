//! Converters (manual §7.3.1), differential against haproxy 2.6: the same
//! expressions rendered by both into response headers, compared one by
//! one (an expression that finds nothing renders as nothing in both). The
//! list covers every converter of `weir_rules::conv`, the casts they make
//! (a string's leading digits, an address as an integer), the edges
//! haproxy documents (division by zero, saturation, `field` out of range,
//! `url_dec`'s `+`, `json`'s decoders (on bytes the configuration's
//! `\xHH` escapes give, UTF-8 or not), `json_query`'s types, the JWT
//! converters' return codes, `fix_*` on a FIX message, `protobuf` and
//! `ungrpc` on protocol buffers and gRPC messages) and the
//! argument quoting of §2.2 (a `]` inside quotes stays in the expression),
//! and the text and date converters (`ltrim`, `rtrim`, `cut_crlf`,
//! `host_only`, `port_only`, `hex2i`, `htonl`, `language`, `http_date`,
//! `utime`, `ltime`).

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const EXPRS: &[&str] = &[
    r#"str(abc),add(txn.nope)"#,
    r#"int(7),div(0)"#,
    r#"int(-7),div(2)"#,
    r#"int(-7),mod(3)"#,
    r#"int(7),mod(0)"#,
    r#"int(9223372036854775807),add(1)"#,
    r#"int(-9223372036854775807),sub(5)"#,
    r#"int(9223372036854775807),mul(2)"#,
    r#"int(-9223372036854775807),neg"#,
    r#"str(x),neg"#,
    r#"int(5),cpl"#,
    r#"int(258),hex"#,
    r#"int(-2),hex"#,
    r#"int(258),base64"#,
    r#"int(1),sha1,hex"#,
    r#"int(1),crc32"#,
    r#"int(258),bytes(6),hex"#,
    r#"int(258),be2hex"#,
    r#"int(258),xxh32"#,
    r#"int(12),length"#,
    r#"int(258),url_enc"#,
    r#"bool(1),hex"#,
    r#"ipv4(1.2.3.4),hex"#,
    r#"ipv6(::1),base64"#,
    r#"str(12),add(3)"#,
    r#"str(abc),sha1,hex"#,
    r#"str(abc),sha2(224),hex"#,
    r#"str(abc),sha2(512),base64"#,
    r#"str(abc),digest(SHA384),hex"#,
    r#"str(abc),hmac(sha1,a2V5),hex"#,
    r#"str(abc),crc32c"#,
    r#"str(abc),crc32c(1)"#,
    r#"str(abc),wt6"#,
    r#"str(abc),wt6(1)"#,
    r#"str(hello world),wt6"#,
    r#"str(abc),xxh32(1)"#,
    r#"str(abc),xxh64(1)"#,
    r#"str(abc),xxh3"#,
    r#"str(abc),xxh3(1)"#,
    r#"bin(01020304050607),be2dec(:,2)"#,
    r#"bin(0102030405060708090a),be2dec(:,8)"#,
    r#"str(),be2hex"#,
    r#"str(abc),be2hex(:,1)"#,
    r#"str(in),add_item(',',txn.nope)"#,
    r#"str(in),add_item(',',txn.nope,s)"#,
    r#"str(),add_item(',',,s)"#,
    r#"str(),add_item(',',txn.nope)"#,
    r#"str(a),iif(y,n)"#,
    r#"str(0),iif(y,n)"#,
    r#"str(),iif(y,n)"#,
    r#"int(0),iif(y,n)"#,
    r#"str('a b!\$%&()*+,-./:;<=>?@^_`{|}~'),url_enc"#,
    r#"str(é),url_enc"#,
    r#"str('a\"b\\c/d'),json"#,
    r#"str(é),json"#,
    r#"str(é),json(utf8)"#,
    r#"str(é),json(utf8s)"#,
    r#"str(\xE0),json(utf8)"#,
    r#"str(-\xE0-),json(utf8s)"#,
    r#"str(\xC3\xA9),json"#,
    r#"str(\xE0),hex"#,
    r#"str(\xE0\xC3\xA9\x41),hex"#,
    r#"bin(01),json"#,
    r#"bin(7f),json"#,
    r#"bin(c1bf),json(utf8p)"#,
    r#"bin(c1bf),json(utf8ps)"#,
    r#"bin(c1bf),json(utf8s)"#,
    r#"bin(f09f9880),json(utf8)"#,
    r#"bin(f09f9880),json(utf8s)"#,
    r#"str(a/b/c),field(2,/,2)"#,
    r#"str(a/b:c/d),field(2,/:,2)"#,
    r#"str(a//b),word(2,/)"#,
    r#"str(a/b),word(3,/)"#,
    r#"str(a/b),field(-1,/)"#,
    r#"str(a/b/c),field(-2,/,2)"#,
    r#"str(abc),strcmp(txn.s)"#,
    r#"str(abd),strcmp(txn.s)"#,
    r#"str(ab),strcmp(txn.s)"#,
    r#"str(abcd),strcmp(txn.s)"#,
    r#"str(a),strcmp(txn.s)"#,
    r#"str(abc),secure_memcmp(txn.s)"#,
    r#"str(/a+b?c+d%20),url_dec"#,
    r#"str(/a+b?c+d%20),url_dec(1)"#,
    r#"str(%zz%2),url_dec"#,
    r#"str(12abc),add(1)"#,
    r#"str( 12),add(1)"#,
    r#"str(-5),add(1)"#,
    r#"str(+5),add(1)"#,
    r#"str(),add(1)"#,
    r#"str(abc),add(1)"#,
    r#"str(1),iif(y,n)"#,
    r#"str(2x),iif(y,n)"#,
    r#"str(x2),iif(y,n)"#,
    r#"str( 1),iif(y,n)"#,
    r#"str(1),bool"#,
    r#"str(abc),bool"#,
    r#"str(),bool"#,
    r#"str(abz),strcmp(txn.s)"#,
    r#"str(A),strcmp(txn.s)"#,
    r#"str(%zz),url_dec"#,
    r#"str(%2),url_dec"#,
    r#"str(a%),url_dec"#,
    r#"str(%41),url_dec"#,
    r#"str(%00a),url_dec,length"#,
    r#"str(x),word(1,/)"#,
    r#"str(/),field(1,/)"#,
    r#"str(/),word(1,/)"#,
    r#"str(a),hex,lower"#,
    r#"bool(1),iif(y,n)"#,
    r#"ipv4(1.2.3.4),add(1)"#,
    r#"str('{\"d\":4.5,\"i\":-7.9,\"b\":12345678.25}'),json_query('\$.d')"#,
    r#"str('{\"d\":4.5,\"i\":-7.9,\"b\":12345678.25}'),json_query('\$.i','int')"#,
    r#"str('{\"d\":4.5,\"i\":-7.9,\"b\":12345678.25}'),json_query('\$.b')"#,
    r#"str('{\"a\":[1,{\"c\":\"x\"}],\"t\":true}'),json_query('\$.a[1].c')"#,
    r#"str('{\"a\":[1,{\"c\":\"x\"}],\"t\":true}'),json_query('\$.t')"#,
    r#"str('{\"a\":[1,{\"c\":\"x\"}],\"t\":false}'),json_query('\$.t')"#,
    r#"str('{\"a\":[1,{\"c\":\"x\"}],\"n\":null}'),json_query('\$.a')"#,
    r#"str('{\"a\":[1,{\"c\":\"x\"}],\"n\":null}'),json_query('\$.n')"#,
    r#"str('{\"my.key\":\"v\"}'),json_query('\$.my\\.key')"#,
    r#"str('{\"a\":'),json_query('\$.a')"#,
    r#"bin(383d4649582e342e3401393d35390133353d410133343d310134393d574549520135323d32303236313132362d31303a30303a30300135363d504545520139383d30013130383d33300131303d31343201),fix_is_valid"#,
    r#"bin(383d4649582e342e3401393d35390133353d410133343d310134393d574549520135323d32303236313132362d31303a30303a30300135363d504545520139383d30013130383d33300131303d31343301),fix_is_valid"#,
    r#"bin(383d4649582e342e3401393d35390133353d410133343d310134393d574549520135323d32303236313132362d31303a30303a30300135363d504545520139383d30013130383d33300131303d31343201),fix_tag_value(MsgType)"#,
    r#"bin(383d4649582e342e3401393d35390133353d410133343d310134393d574549520135323d32303236313132362d31303a30303a30300135363d504545520139383d30013130383d33300131303d31343201),fix_tag_value(49)"#,
    r#"bin(383d4649582e342e3401393d35390133353d410133343d310134393d574549520135323d32303236313132362d31303a30303a30300135363d504545520139383d30013130383d33300131303d31343201),fix_tag_value(CheckSum)"#,
    r#"bin(383d4649582e342e3401393d35390133353d410133343d310134393d574549520135323d32303236313132362d31303a30303a30300135363d504545520139383d30013130383d33300131303d31343201),fix_tag_value(999)"#,
    r#"str(eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3ZWlyIiwibiI6NDIsIm9rIjp0cnVlfQ.c0QYn7HV5vllyAWqpyjiBeirBG8lfUJ7iOeOCcS0Me8),jwt_verify(HS256,'weir secret')"#,
    r#"str(eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3ZWlyIiwibiI6NDIsIm9rIjp0cnVlfQ.c0QYn7HV5vllyAWqpyjiBeirBG8lfUJ7iOeOCcS0Me8),jwt_verify(HS256,'other secret')"#,
    r#"str(eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3ZWlyIiwibiI6NDIsIm9rIjp0cnVlfQ.c0QYn7HV5vllyAWqpyjiBeirBG8lfUJ7iOeOCcS0Me8),jwt_verify(HS384,'weir secret')"#,
    r#"str(eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3ZWlyIiwibiI6NDIsIm9rIjp0cnVlfQ.c0QYn7HV5vllyAWqpyjiBeirBG8lfUJ7iOeOCcS0Me8),jwt_verify(txn.alg,'weir secret')"#,
    r#"str(eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3ZWlyIiwibiI6NDIsIm9rIjp0cnVlfQ.c0QYn7HV5vllyAWqpyjiBeirBG8lfUJ7iOeOCcS0Me8),jwt_verify(RS256,'weir secret')"#,
    r#"str(eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3ZWlyIiwibiI6NDIsIm9rIjp0cnVlfQ.c0QYn7HV5vllyAWqpyjiBeirBG8lfUJ7iOeOCcS0Me8x),jwt_verify(HS256,'weir secret')"#,
    r#"str(eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3ZWlyIiwibiI6NDIsIm9rIjp0cnVlfQ.c0QYn7HV5vllyAWqpyjiBeirBG8lfUJ7iOeOCcS0Me8),jwt_header_query('\$.alg')"#,
    r#"str(eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3ZWlyIiwibiI6NDIsIm9rIjp0cnVlfQ.c0QYn7HV5vllyAWqpyjiBeirBG8lfUJ7iOeOCcS0Me8),jwt_payload_query('\$.n','int'),add(1)"#,
    r#"str(eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ3ZWlyIiwibiI6NDIsIm9rIjp0cnVlfQ.c0QYn7HV5vllyAWqpyjiBeirBG8lfUJ7iOeOCcS0Me8),jwt_payload_query('\$.ok')"#,
    r#"str(xxaybxx),ltrim(x)"#,
    r#"str(xxaybxx),rtrim(x)"#,
    r#"str(xyz),ltrim(xyz)"#,
    r#"str(ab),cut_crlf"#,
    r#"str(WWW.Example.ORG:8080),host_only"#,
    r#"str([::1]:443),host_only"#,
    r#"str([::1]:443),port_only"#,
    r#"str(example.org),port_only"#,
    r#"str(example.org:81),port_only"#,
    r#"str(ff),hex2i"#,
    r#"str(7fffffff),hex2i"#,
    r#"str(xyz),hex2i"#,
    r#"int(16909060),htonl,hex"#,
    r#"int(-1),htonl,hex"#,
    r#"str('fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7'),language(en;de)"#,
    r#"str('fr-CH, fr;q=0.9, en;q=0.8'),language(fr;en)"#,
    r#"str('fr-CH;q=0.5, de;q=0.7'),language(fr;de)"#,
    r#"str('da, en-gb;q=0.8, en;q=0.7'),language(es,nl)"#,
    r#"str('en;q=0'),language(en)"#,
    r#"int(1453071758),http_date"#,
    r#"int(1453071758),http_date(3600)"#,
    r#"int(1453071758123),http_date(0,ms)"#,
    r#"int(1453071758123456),http_date(-1000000,us)"#,
    r#"int(1453071758),utime(%Y%m%d%H%M%S)"#,
    r#"int(1453071758),utime('%a %A %b %B %d %e %H %I %j %m %M %p %S %u %w %y %C %D %F %T %R %s %%')"#,
    r#"int(1453071758),utime(%Y-%m-%d,86400)"#,
    r#"int(1453071758),ltime(%d/%b/%Y:%H:%M:%S)"#,
    r#"str(YQBi),b64dec"#,
    r#"str(YQBi),b64dec,length"#,
    r#"str(YQBi),b64dec,lower"#,
    r#"str(YQBi),b64dec,hex"#,
    r#"str(YQBi),b64dec,base64"#,
    r#"str(YQBi),b64dec,bytes(1),length"#,
    r#"str(YQBi),b64dec,bytes(2),length"#,
    r#"str(YQBi),b64dec,word(1,b)"#,
    r#"str(YQBi),b64dec,concat(x)"#,
    r#"str(YQBi),b64dec,sha1,length"#,
    r#"bin(610062),length"#,
    r#"bin(610062),crc32"#,
    r#"str(abc),sha1,bytes(0,1),length"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(1,int32)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(1),hex"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(2)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(2,int32)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(3),hex"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(3.1,uint64)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(3.2,sint32)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(3.3)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(4,fixed32)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(5,sfixed64)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(5),hex"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(6,float)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(7,double)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(8,enum)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(9,fixed32)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(10,int32)"#,
    r#"bin(000000004008960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),ungrpc(3.3)"#,
    r#"bin(000000004008960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807000000004008960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),ungrpc(2)"#,
    r#"bin(08960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),ungrpc(1,int32)"#,
    r#"bin(000000004008960112036162631a1108fbffffffffffffffff0110091a026869250500000029f9ffffffffffffff350000c03f39000000000000044040014dfdffffff0807),protobuf(1,int32)"#,
    r#"bin(000000000208050000000002100c),ungrpc(2,int32)"#,
    r#"bin(08),protobuf(1,int32)"#,
    r#"bin(0896),protobuf(1,int32)"#,
    r#"bin(08ffffffffffffffffff7f),protobuf(1,int64)"#,
    r#"bin(08feffffff0f),protobuf(1,sint64)"#,
    r#"bin(2d0000807f),protobuf(5,float)"#,
    r#"bin(2d5ed0324f),protobuf(5,float)"#,
    r#"bin(29ea8ca039593e2946),protobuf(5,double)"#,
    r#"bin(29000000000000f0ff),protobuf(5,double)"#,
    r#"bin(0a020805),protobuf(1..1,int32)"#,
    r#"str(abc),protobuf(1,int32)"#,
    r#"int(8),protobuf(1,int32)"#,
    r#"bin(539926ca6c458ed0c38373),aes_gcm_dec(128,bm5ubm5ubm5ubm5u,a2tra2tra2tra2tra2traw==,yF8fBsCtQJ/OJgtyQ9/r8g==),hex"#,
    r#"bin(990c31dff4efc934aabe08),aes_gcm_dec(192,bm5ubm5ubm5ubm5u,eXl5eXl5eXl5eXl5eXl5eXl5eXl5eXl5,GB6YnK0W8nUBhlOLRbE5ig==)"#,
    r#"bin(5301d77609806fca07efa9),aes_gcm_dec(256,bm5ubm5ubm5ubm5u,enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6eno=,vlC8OwvNaAsrhker35OVkw==),hex"#,
    r#"bin(539926ca6c458ed0c38373),aes_gcm_dec(128,bm5ubm5ubm5ubm5u,a2tra2tra2tra2tra2traw==,AAAAAAAAAAAAAAAAAAAAAA==),hex"#,
    r#"bin(539926ca6c458ed0c38373),aes_gcm_dec(256,bm5ubm5ubm5ubm5u,a2tra2tra2tra2tra2traw==,yF8fBsCtQJ/OJgtyQ9/r8g==),hex"#,
];

/// A FIX logon message made for this test (checksum 142).
const FIX_LOGON: &str = "383d4649582e342e3401393d35390133353d410133343d310134393d574549520135323d32303236313132362d31303a30303a30300135363d504545520139383d30013130383d33300131303d31343201";

/// Expressions per `http-request return` (haproxy reads 64 words a line).
const GROUP: usize = 10;

fn cfg(port: u16) -> String {
    let mut c = format!(
        "defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
         frontend fe\n    bind 127.0.0.1:{port}\n    http-request set-var(txn.s) str(abc)\n    http-request set-var(txn.alg) str(PS256)\n"
    );
    for g in (0..EXPRS.len()).step_by(GROUP) {
        c.push_str("    http-request return status 200");
        for (i, e) in EXPRS.iter().enumerate().skip(g).take(GROUP) {
            c.push_str(&format!(" hdr x-{i:03} \"[%[{e}]]\""));
        }
        c.push_str(&format!(" if {{ path /g{g} }}\n"));
    }
    c
}

/// Each expression's rendering, in order (`?` where the header is missing).
fn renderings(port: u16) -> Vec<String> {
    let mut out = vec!["?".to_string(); EXPRS.len()];
    for g in (0..EXPRS.len()).step_by(GROUP) {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(
            format!("GET /g{g} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .unwrap();
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got);
        for line in String::from_utf8_lossy(&got).lines() {
            let Some(rest) = line.strip_prefix("x-") else {
                continue;
            };
            let Some((i, v)) = rest.split_once(": ") else {
                continue;
            };
            if let Ok(i) = i.parse::<usize>() {
                out[i] = v.to_string();
            }
        }
    }
    out
}

#[test]
fn converters_as_haproxy() {
    let (wp, hp) = (free_port(), free_port());
    let Some(_h) = Haproxy::start(&cfg(hp), hp) else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    let _w = Weir::start(&cfg(wp), wp);
    let (ours, theirs) = (renderings(wp), renderings(hp));
    let diffs: Vec<String> = EXPRS
        .iter()
        .zip(ours.iter().zip(&theirs))
        .filter(|(_, (o, t))| o != t)
        .map(|(e, (o, t))| format!("{e}: weir {o}, haproxy {t}"))
        .collect();
    assert!(diffs.is_empty(), "{diffs:#?}");
    // Both agreeing on nothing cannot pass: a few answers as the manual
    // gives them.
    let at = |e: &str| ours[EXPRS.iter().position(|x| *x == e).unwrap()].as_str();
    assert_eq!(at("bin(01020304050607),be2dec(:,2)"), "[258:772:1286:7]");
    assert_eq!(at("int(7),div(0)"), "[9223372036854775807]");
    assert_eq!(
        at("str(abc),sha1,hex"),
        "[A9993E364706816ABA3E25717850C26C9CD0D89D]"
    );
    assert_eq!(at("str(in),add_item(',',txn.nope,s)"), "[in,s]");
    // A binary read as a string ends at its first NUL byte.
    assert_eq!(at("str(YQBi),b64dec,length"), "[1]");
    assert_eq!(at("str(YQBi),b64dec,hex"), "[610062]");
    assert_eq!(
        at(&format!("bin({}),fix_tag_value(49)", FIX_LOGON)),
        "[WEIR]"
    );
    let find = |part: &str| EXPRS.iter().find(|e| e.contains(part)).copied().unwrap();
    assert_eq!(at(find(r"json_query('\$.b')")), "[1.23457e+07]");
    assert_eq!(
        at(find("jwt_verify(HS256,'weir secret')")),
        "[1]",
        "a JWT verified"
    );
    // (Without a path, `jwt_payload_query` gives the decoded part as the
    // manual says; haproxy 2.6.12 gives nothing, so it is not compared.)
}

/// Converter chains whose types do not fit, and some that do: haproxy
/// refuses the first at load time ("converter 'x' cannot be applied"),
/// and so must weir, with the line.
const TYPED: &[(&str, bool)] = &[
    ("bin(00ff),add(1)", false),
    ("str(YQBi),b64dec,neg", false),
    ("str(a),sha1,mod(2)", false),
    ("str(a),bytes(1),even", false),
    ("ipv6(::1),add(1)", false),
    ("bool(1),ipmask(24)", false),
    ("str(a),sha1,ipmask(24)", false),
    ("bin(00),http_date", false),
    ("bin(00),htonl", false),
    ("req.body,add(1)", false),
    ("ssl_c_serial,add(1)", false),
    ("ssl_f_der,ipmask(24)", false),
    ("req.body,length", true),
    ("ipv4(1.2.3.4),add(1)", true),
    ("int(1),ipmask(24)", true),
    ("str(1),add(1)", true),
    ("str(a),sha1,xxh32", true),
    ("bin(00),lower", true),
    ("str(a),sha1,hex,lower", true),
];

/// Whether `bin` (weir or haproxy) accepts a frontend whose line 7 renders
/// `expr`, and its error output.
fn accepts(bin: &str, expr: &str) -> (bool, String) {
    let dir = tempdir("typed");
    let path = dir.join("t.cfg");
    std::fs::write(
        &path,
        format!(
            "defaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n\
             frontend f\n    http-request return status 200 hdr x \"%[{expr}]\"\n    bind 127.0.0.1:9\n"
        ),
    )
    .unwrap();
    let out = std::process::Command::new(bin)
        .args(["-c", "-f", path.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), err)
}

#[test]
fn converter_types_are_checked_at_load_as_haproxy() {
    let Some(hap) = Haproxy::bin() else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    for (expr, ok) in TYPED {
        let (theirs, _) = accepts(hap, expr);
        assert_eq!(theirs, *ok, "haproxy on {expr}");
        let (ours, err) = accepts(WEIR, expr);
        assert_eq!(ours, *ok, "weir on {expr}: {err}");
        if !ok {
            let name = expr.rsplit(',').next().unwrap().split('(').next().unwrap();
            let want = format!("converter '{name}' cannot be applied");
            assert!(err.contains(":7]") && err.contains(&want), "{expr}: {err}");
        }
    }
}

/// `aes_gcm_dec`'s arguments, checked at load time as haproxy checks them:
/// the key size, base64 constants (or variables), all four of them.
#[test]
fn aes_gcm_dec_arguments_are_checked_at_load_as_haproxy() {
    let Some(hap) = Haproxy::bin() else {
        panic!("haproxy is not installed: tests/run installs it");
    };
    for (expr, ok) in [
        ("str(a),aes_gcm_dec(100,bm5u,bm5u,bm5u)", false),
        ("str(a),aes_gcm_dec(128,abc,bm5u,bm5u)", false),
        ("str(a),aes_gcm_dec(128,bm5u,bm5u)", false),
        ("str(a),aes_gcm_dec(128,txn.n,txn.k,txn.t)", true),
        ("str(a),aes_gcm_dec(192,bm5u,eXl5,AAAA)", true),
    ] {
        assert_eq!(accepts(hap, expr).0, ok, "haproxy on {expr}");
        let (ours, err) = accepts(WEIR, expr);
        assert_eq!(ours, ok, "weir on {expr}: {err}");
        assert!(
            ok || (err.contains(":7]") && err.contains("aes_gcm_dec")),
            "{expr}: {err}"
        );
    }
}
