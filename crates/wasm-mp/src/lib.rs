//! wasm-bindgen exports of `aigenora-core`'s mental poker: the deck layers and the blind-RSA token
//! oblivious transfer, a module of its own (crates/wasm has the core crypto) since RSA arithmetic is most
//! of the size and only mental-poker sessions use it. No logic lives here: as in crates/wasm, a core
//! error becomes a JS `Error` whose message starts with its stable code (`"CODE: message"`).
//!
//! Nothing here may panic: the core checks every length and returns errors instead, and the release
//! profile aborts on panic, so a panic would surface as a trap rather than unwind through JS.

use aigenora_core::{aead, deck, ot, Error};
use wasm_bindgen::prelude::*;

fn js(e: Error) -> JsError {
    JsError::new(&format!("{}: {}", e.code(), e))
}

#[wasm_bindgen]
pub fn deck_encode_card(rank: f64, suit: f64) -> Result<Vec<u8>, JsError> {
    deck::encode_card_number(rank, suit).map(|c| c.to_vec()).map_err(js)
}

#[wasm_bindgen]
pub fn deck_pack_inner(card: &[u8], pad: &[u8]) -> Result<Vec<u8>, JsError> {
    deck::pack_inner(card, pad).map(|p| p.to_vec()).map_err(js)
}

#[wasm_bindgen]
pub fn deck_seal_inner(k_inner: &[u8], nonce: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, JsError> {
    deck::seal_inner(k_inner, nonce, plaintext).map(|b| b.to_vec()).map_err(js)
}

#[wasm_bindgen]
pub fn deck_seal_outer(k_outer: &[u8], nonce: &[u8], blob_a: &[u8]) -> Result<Vec<u8>, JsError> {
    deck::seal_outer(k_outer, nonce, blob_a).map(|b| b.to_vec()).map_err(js)
}

#[wasm_bindgen]
pub fn deck_open_layer(key: &[u8], blob: &[u8]) -> Result<Vec<u8>, JsError> {
    deck::open_layer(key, blob).map_err(js)
}

/// `candidates` is the keys back to back, 32 bytes each (a short last chunk is refused by the core).
/// Answers the index of the first key that opens `blob`, or nothing; the caller opens it with that key.
#[wasm_bindgen]
pub fn deck_brute_force_open(blob: &[u8], candidates: &[u8]) -> Result<Option<u32>, JsError> {
    let keys: Vec<&[u8]> = candidates.chunks(aead::KEY_LEN).collect();
    let found = deck::brute_force_open(blob, &keys).map_err(js)?;
    Ok(found.map(|(i, _)| i as u32))
}

/// The rejection reason, or nothing when the play passes the check.
#[wasm_bindgen]
pub fn deck_validate_play(hand: Vec<String>, played: Vec<String>, id_b: &str, declared_card: &[u8], k_inner: &[u8], k_outer: &[u8], blob_b: &[u8]) -> Result<Option<String>, JsError> {
    let verdict = deck::validate_play(&hand, &played, id_b, declared_card, k_inner, k_outer, blob_b).map_err(js)?;
    Ok(verdict.err().map(|r| r.reason().to_owned()))
}

#[wasm_bindgen]
pub fn ot_context(protocol_id: &str, session_id: &str, sender_role: u8, payload_type: u8, label: &str) -> Result<Vec<u8>, JsError> {
    ot::context(protocol_id, session_id, sender_role, payload_type, label).map_err(js)
}

fn modulus(n: &[u8]) -> Result<ot::Modulus, JsError> {
    ot::Modulus::from_bytes(n).map_err(js)
}

/// h (256 bytes) followed by the counter as u32 big-endian.
#[wasm_bindgen]
pub fn ot_fdh(n: &[u8], context: &[u8]) -> Result<Vec<u8>, JsError> {
    let (h, counter) = ot::fdh(&modulus(n)?, context).map_err(js)?;
    Ok([&h[..], &counter.to_be_bytes()].concat())
}

#[wasm_bindgen]
pub fn ot_fdh_candidate(context: &[u8], counter: u32) -> Vec<u8> {
    ot::fdh_candidate(context, counter).to_vec()
}

#[wasm_bindgen]
pub fn ot_token_key(token: &[u8], context: &[u8]) -> Result<Vec<u8>, JsError> {
    ot::token_key(token, context).map(|k| k.to_vec()).map_err(js)
}

#[wasm_bindgen]
pub fn ot_seal_payload(key: &[u8], nonce: &[u8], payload: &[u8], context: &[u8]) -> Result<Vec<u8>, JsError> {
    ot::seal_payload(key, nonce, payload, context).map_err(js)
}

#[wasm_bindgen]
pub fn ot_open_payload(key: &[u8], sealed: &[u8], context: &[u8]) -> Result<Vec<u8>, JsError> {
    ot::open_payload(key, sealed, context).map_err(js)
}

#[wasm_bindgen]
pub fn ot_open_sealed(token: &[u8], context: &[u8], sealed: &[u8]) -> Result<Vec<u8>, JsError> {
    ot::open_sealed(token, context, sealed).map_err(js)
}

#[wasm_bindgen]
pub fn ot_is_unit(n: &[u8], r: &[u8]) -> Result<bool, JsError> {
    Ok(ot::is_unit(&modulus(n)?, r))
}

#[wasm_bindgen]
pub fn ot_blind(n: &[u8], context: &[u8], r: &[u8]) -> Result<Vec<u8>, JsError> {
    ot::blind(&modulus(n)?, context, r).map(|z| z.to_vec()).map_err(js)
}

#[wasm_bindgen]
pub fn ot_unblind(n: &[u8], y: &[u8], r: &[u8]) -> Result<Vec<u8>, JsError> {
    ot::unblind(&modulus(n)?, y, r).map(|t| t.to_vec()).map_err(js)
}

#[wasm_bindgen]
pub fn ot_check_witness(n: &[u8], context: &[u8], z: &[u8], r: &[u8]) -> Result<bool, JsError> {
    ot::check_witness(&modulus(n)?, context, z, r).map_err(js)
}

#[wasm_bindgen]
pub fn ot_check_token(n: &[u8], context: &[u8], token: &[u8]) -> Result<bool, JsError> {
    ot::check_token(&modulus(n)?, context, token).map_err(js)
}

#[wasm_bindgen]
pub fn ot_encode_rsa_pub(n: &[u8]) -> Result<String, JsError> {
    Ok(ot::encode_rsa_pub(&modulus(n)?))
}

/// The modulus (256 bytes) of a valid `rsa_pub` JSON text.
#[wasm_bindgen]
pub fn ot_decode_rsa_pub(text: &str) -> Result<Vec<u8>, JsError> {
    ot::decode_rsa_pub(text).map(|m| m.bytes().to_vec()).map_err(js)
}

/// A Sender's RSA private key, kept in WASM memory and zeroized when the object is freed. Imported
/// only: keys come from the platform's generator.
#[wasm_bindgen]
pub struct OtRsaKey(ot::PrivateKey);

#[wasm_bindgen]
impl OtRsaKey {
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(n: &[u8], e: u32, d: &[u8], p: &[u8], q: &[u8], dp: &[u8], dq: &[u8], qi: &[u8], blind_secret: &[u8]) -> Result<OtRsaKey, JsError> {
        let parts = ot::KeyParts { n, e: e.into(), d, p, q, dp, dq, qi };
        ot::PrivateKey::from_parts(&parts, blind_secret).map(OtRsaKey).map_err(js)
    }

    pub fn n(&self) -> Vec<u8> {
        self.0.modulus().bytes().to_vec()
    }

    pub fn private_op(&self, x: &[u8]) -> Result<Vec<u8>, JsError> {
        self.0.private_op(x).map(|y| y.to_vec()).map_err(js)
    }

    pub fn token(&self, context: &[u8]) -> Result<Vec<u8>, JsError> {
        self.0.token(context).map(|t| t.to_vec()).map_err(js)
    }

    /// The token (256 bytes) followed by the sealed payload.
    pub fn seal_label(&self, context: &[u8], payload: &[u8], nonce: &[u8]) -> Result<Vec<u8>, JsError> {
        let (token, sealed) = self.0.seal_label(context, payload, nonce).map_err(js)?;
        Ok([&token[..], &sealed].concat())
    }

    /// n, d (256 bytes each), then p, q, dp, dq, qi (128 bytes each).
    pub fn numbers(&self) -> Vec<u8> {
        let k = self.0.numbers();
        [k.n, k.d, k.p, k.q, k.dp, k.dq, k.qi].concat()
    }
}
