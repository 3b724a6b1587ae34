//! OCSP responses made with `openssl ocsp` (a test CA answering for
//! serial 1234), decoded and printed as `openssl ocsp -resp_text` prints
//! them.

use super::*;

/// Revoked (keyCompromise), with a nonce, no certificates.
const REVOKED_B64: &str = concat!(
    "MIICHwoBAKCCAhgwggIUBgkrBgEFBQcwAQEEggIFMIICATCB6qE1MDMxCzAJBgNVBAYTAkZSMRIw",
    "EAYDVQQKDAlXZWlyIFRlc3QxEDAOBgNVBAMMB1Rlc3QgQ0EYDzIwMjYxMTI2MjM0MTIwWjB7MHkw",
    "OzAJBgUrDgMCGgUABBQFFXIvBl9HlULfGusWCkaSaEc44wQUc3XA/t/U5bCo6HDuMWwOc1O3/EoC",
    "AhI0oRYYDzIwMjQwMTAxMDAwMDAwWqADCgEBGA8yMDI2MTEyNjIzNDEyMFqgERgPMjAzNjExMjMy",
    "MzQxMjBaoSMwITAfBgkrBgEFBQcwAQIEEgQQk7daXAca1Aj9nSkOHDVp7DANBgkqhkiG9w0BAQsF",
    "AAOCAQEADE4OePL8Eh8+oyG5IBQySQTosQgnp1nYaAXBOqEe6CYxXSdCz/G06/X3tBafz2s5ng8g",
    "cm+mjZ09pmF9OBnn/xVn/+fr6b5hLlgedht7hrvpEH9iDpc99resqlUwNx6PPpZOxrIyfuXUEi3T",
    "gArUf7Pn6V4ceYUtzW4k7MZhvFmVNS65rRrW70yzAJhL9/DFOewjfSr8UJ0w+Ot5uNYt8jrOoyWe",
    "AIHfMFzA7lGJLbnfNY/8KsXlUbYGMFQtet0m2HYwRU0ii4ijdMwnovslLPGgMwadc5Dh6E0nDjuW",
    "7TxOr65jWNUc7ZJ2w0RXmhvOHbOWLwtOPL1j3DOzWqbVVg==",
);

/// Good, with the responder's certificate, no nonce.
const GOOD_B64: &str = concat!(
    "MIIFNwoBAKCCBTAwggUsBgkrBgEFBQcwAQEEggUdMIIFGTCBr6E1MDMxCzAJBgNVBAYTAkZSMRIw",
    "EAYDVQQKDAlXZWlyIFRlc3QxEDAOBgNVBAMMB1Rlc3QgQ0EYDzIwMjYxMTI2MjM0MTE2WjBlMGMw",
    "OzAJBgUrDgMCGgUABBQFFXIvBl9HlULfGusWCkaSaEc44wQUc3XA/t/U5bCo6HDuMWwOc1O3/EoC",
    "AhI0gAAYDzIwMjYxMTI2MjM0MTE2WqARGA8yMDM2MTEyMzIzNDExNlowDQYJKoZIhvcNAQELBQAD",
    "ggEBAJG1buUT/ryFCDGwuMnBHHla+1YUHZ8fVsJejLUcpdjHSDNHJyoPhaoSny5E/OllckEhV3Cl",
    "Q/XX+wGsUfk0eAewV2DQbXz/ByZp/EcQxQuwlYKVXAMFnHX8zUOofM0ZY5qYHcR6QsjxsbMZCNPW",
    "/7OTDkrNXUH1sL3TyD0VzOpcKBqfB+UuZhpvf/I3uRApEqz+uM3mI9pS7lG53phA+76o+aWvZbR8",
    "UkXLxdFMU2kV6kDiVL8W19t33IBF49BeGJMqD8Cc2mUC1xlQAfNVISbdqEx5Wbm7KAqZATNEBKWQ",
    "jezXqfPa02a+RM1rv5y3sm2xKw2QfhPLOv6uSt/h4jygggNPMIIDSzCCA0cwggIvoAMCAQICFDqc",
    "SyY+tEqkHqoRJIP56Ua4CCDuMA0GCSqGSIb3DQEBCwUAMDMxCzAJBgNVBAYTAkZSMRIwEAYDVQQK",
    "DAlXZWlyIFRlc3QxEDAOBgNVBAMMB1Rlc3QgQ0EwHhcNMjYxMTI2MjM0MTE1WhcNMzYxMTIzMjM0",
    "MTE1WjAzMQswCQYDVQQGEwJGUjESMBAGA1UECgwJV2VpciBUZXN0MRAwDgYDVQQDDAdUZXN0IENB",
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwvOIr+xk7aJUpPgqe1wlbRSsf27Y/Rlh",
    "CIxCnp+vhUETaontBWBXG0/sthpLKcJUyG5pV2776RwMcglMP/015ruOsmNxs3RpGPeTHkzp+t6/",
    "yvOzX41a84dNzqJf7TkjHsIt+loY5mAMJ3xxodYYwTv7QyP8f7RDcpNLzVe76eVMvZ2yQwYXj3nr",
    "tUxcYlv/d4sGfEH8EjdDowqMFmuRvYCig2cUzyt0d2xI65l9cg/y5UuNn28HBv51t3/2Uz6cLWM9",
    "J6ADGHklyNufK38X0ICFjCLGPyT41jmuTQFrDuWE5f4MujWxnzurfhMyNAo5VfIeYVaeRLAwXZFf",
    "Tt5YxwIDAQABo1MwUTAdBgNVHQ4EFgQUc3XA/t/U5bCo6HDuMWwOc1O3/EowHwYDVR0jBBgwFoAU",
    "c3XA/t/U5bCo6HDuMWwOc1O3/EowDwYDVR0TAQH/BAUwAwEB/zANBgkqhkiG9w0BAQsFAAOCAQEA",
    "j01RJ8K7H4niRQb98Paw7SAh1n/cH+s14Q39hJuo3h5kmP26UMGWsBrEgECcdNHqUq40sSAoGWGR",
    "hA2I9wW6kcuKdjCRAaNyRl1bE1SKPeMo7u1n2SozuzimkvMbg8gwFkMjkk2NeXwTDdcczZWJrWO7",
    "7UeDlNjLxgx4JEAj2WGchgRvQXN8G7Ud/UjAkqqB6WMFUwH3oQh6+Ju527w40LBeVcrzt1q+1QvF",
    "KhLOIEAxaw5cSigeuVRyg/XEQ7GJGlfKKDpj6dRbDmXbf5Qica+R7jFU0L5b2Q9LnpLPAd/Bu/9V",
    "jUiPKs7AvINBE3uL0RLiR9H/W4cmjZdyQhXE6Q==",
);

/// What `openssl ocsp -respin revoked.der -resp_text -noverify` printed.
const REVOKED_TEXT: &str = r#"OCSP Response Data:
    OCSP Response Status: successful (0x0)
    Response Type: Basic OCSP Response
    Version: 1 (0x0)
    Responder Id: C = FR, O = Weir Test, CN = Test CA
    Produced At: Nov 26 23:41:20 2026 GMT
    Responses:
    Certificate ID:
      Hash Algorithm: sha1
      Issuer Name Hash: 0515722F065F479542DF1AEB160A4692684738E3
      Issuer Key Hash: 7375C0FEDFD4E5B0A8E870EE316C0E7353B7FC4A
      Serial Number: 1234
    Cert Status: revoked
    Revocation Time: Jan  1 00:00:00 2024 GMT
    Revocation Reason: keyCompromise (0x1)
    This Update: Nov 26 23:41:20 2026 GMT
    Next Update: Nov 23 23:41:20 2036 GMT

    Response Extensions:
        OCSP Nonce: 
            041093B75A5C071AD408FD9D290E1C3569EC
    Signature Algorithm: sha256WithRSAEncryption
    Signature Value:
        0c:4e:0e:78:f2:fc:12:1f:3e:a3:21:b9:20:14:32:49:04:e8:
        b1:08:27:a7:59:d8:68:05:c1:3a:a1:1e:e8:26:31:5d:27:42:
        cf:f1:b4:eb:f5:f7:b4:16:9f:cf:6b:39:9e:0f:20:72:6f:a6:
        8d:9d:3d:a6:61:7d:38:19:e7:ff:15:67:ff:e7:eb:e9:be:61:
        2e:58:1e:76:1b:7b:86:bb:e9:10:7f:62:0e:97:3d:f6:b7:ac:
        aa:55:30:37:1e:8f:3e:96:4e:c6:b2:32:7e:e5:d4:12:2d:d3:
        80:0a:d4:7f:b3:e7:e9:5e:1c:79:85:2d:cd:6e:24:ec:c6:61:
        bc:59:95:35:2e:b9:ad:1a:d6:ef:4c:b3:00:98:4b:f7:f0:c5:
        39:ec:23:7d:2a:fc:50:9d:30:f8:eb:79:b8:d6:2d:f2:3a:ce:
        a3:25:9e:00:81:df:30:5c:c0:ee:51:89:2d:b9:df:35:8f:fc:
        2a:c5:e5:51:b6:06:30:54:2d:7a:dd:26:d8:76:30:45:4d:22:
        8b:88:a3:74:cc:27:a2:fb:25:2c:f1:a0:33:06:9d:73:90:e1:
        e8:4d:27:0e:3b:96:ed:3c:4e:af:ae:63:58:d5:1c:ed:92:76:
        c3:44:57:9a:1b:ce:1d:b3:96:2f:0b:4e:3c:bd:63:dc:33:b3:
        5a:a6:d5:56
"#;

fn der(b64: &str) -> Vec<u8> {
    from_base64(b64).unwrap()
}

#[test]
fn a_revoked_response_prints_as_openssl_prints_it() {
    let d = der(REVOKED_B64);
    let r = parse(&d).unwrap();
    assert_eq!(text(&r), REVOKED_TEXT);
    let b = r.basic.as_ref().unwrap();
    assert_eq!(b.responses.len(), 1);
    let s = &b.responses[0];
    assert!(matches!(s.status, Status::Revoked(_, Some(1))));
    assert!(
        s.key().starts_with("303b300906052b0e03021a05000414"),
        "{}",
        s.key()
    );
    assert!(s.key().ends_with("02021234"), "{}", s.key());
    assert_eq!(check(&r, 1_800_000_000), Ok(()));
    assert!(check(&r, 2_200_000_000).is_err(), "past its next update");
}

#[test]
fn a_good_response_carries_its_signer() {
    let d = der(GOOD_B64);
    let r = parse(&d).unwrap();
    let b = r.basic.as_ref().unwrap();
    assert_eq!(b.certs.len(), 1);
    assert_eq!(b.responses[0].status, Status::Good);
    let t = text(&r);
    assert!(t.contains("    Cert Status: good\n"), "{t}");
    assert!(t.contains("Certificate:\nSerial: "), "{t}");
    assert!(t.contains("Subject: /C=FR/O=Weir Test/CN=Test CA\n"), "{t}");
    let rev = der(REVOKED_B64);
    let rev = parse(&rev).unwrap();
    assert_eq!(rev.basic.unwrap().responses[0].key(), b.responses[0].key());
}

#[test]
fn what_is_not_a_response_is_refused() {
    assert_eq!(parse(b"not an ocsp response"), None);
    let d = der(REVOKED_B64);
    for n in [0, 10, d.len() / 2, d.len() - 1] {
        // Truncated: nothing, or a response without its tail; no panic.
        let _ = parse(&d[..n]);
    }
    // An unsuccessful status stops there.
    let r = parse(&[0x30, 0x03, 0x0a, 0x01, 0x03]).unwrap();
    assert_eq!(r.status, 3);
    assert_eq!(
        text(&r),
        "OCSP Response Data:\n    OCSP Response Status: trylater (0x3)\n"
    );
    assert!(check(&r, 0).is_err());
}
