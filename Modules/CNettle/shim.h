#pragma once
/* nettle's HMAC and HKDF, each behind one call taking plain buffers: nettle names its
   functions through macros Swift does not import, and hkdf_extract/hkdf_expand take the
   MAC's functions as pointers. The contexts, which hold the key, are wiped before they
   go. None of these can fail. */
#include <string.h>
#include <nettle/hkdf.h>
#include <nettle/hmac.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>

static inline void tl_hmac_sha1(const uint8_t *key, size_t key_length, const uint8_t *message,
                                size_t length, uint8_t digest[SHA1_DIGEST_SIZE]) {
    struct hmac_sha1_ctx ctx;
    hmac_sha1_set_key(&ctx, key_length, key);
    hmac_sha1_update(&ctx, length, message);
    hmac_sha1_digest(&ctx, SHA1_DIGEST_SIZE, digest);
    explicit_bzero(&ctx, sizeof ctx);
}

static inline void tl_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *message,
                                  size_t length, uint8_t digest[SHA256_DIGEST_SIZE]) {
    struct hmac_sha256_ctx ctx;
    hmac_sha256_set_key(&ctx, key_length, key);
    hmac_sha256_update(&ctx, length, message);
    hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
    explicit_bzero(&ctx, sizeof ctx);
}

static inline void tl_hmac_sha512(const uint8_t *key, size_t key_length, const uint8_t *message,
                                  size_t length, uint8_t digest[SHA512_DIGEST_SIZE]) {
    struct hmac_sha512_ctx ctx;
    hmac_sha512_set_key(&ctx, key_length, key);
    hmac_sha512_update(&ctx, length, message);
    hmac_sha512_digest(&ctx, SHA512_DIGEST_SIZE, digest);
    explicit_bzero(&ctx, sizeof ctx);
}

/* RFC 5869 with HMAC-SHA256: the pseudorandom key from `salt` and the input keying
   material, then `length` bytes (at most 255 * 32) expanded from it with `info`. */
static inline void tl_hkdf_sha256(const uint8_t *ikm, size_t ikm_length, const uint8_t *salt, size_t salt_length,
                                  const uint8_t *info, size_t info_length, uint8_t *out, size_t length) {
    struct hmac_sha256_ctx ctx;
    uint8_t prk[SHA256_DIGEST_SIZE];
    hmac_sha256_set_key(&ctx, salt_length, salt);
    hkdf_extract(&ctx, (nettle_hash_update_func *)hmac_sha256_update, (nettle_hash_digest_func *)hmac_sha256_digest,
                 SHA256_DIGEST_SIZE, ikm_length, ikm, prk);
    hmac_sha256_set_key(&ctx, SHA256_DIGEST_SIZE, prk);
    hkdf_expand(&ctx, (nettle_hash_update_func *)hmac_sha256_update, (nettle_hash_digest_func *)hmac_sha256_digest,
                SHA256_DIGEST_SIZE, info_length, info, length, out);
    explicit_bzero(&ctx, sizeof ctx);
    explicit_bzero(prk, sizeof prk);
}
