import ChuteCore
import Crypto
import Foundation
import _CryptoExtras

/// The password encryption of DOCX, XLSX and PPTX files ("agile encryption", MS-OFFCRYPTO 2.3.4.10), undone by
/// Chute before LibreOffice sees the document.
///
/// An encrypted Office Open XML file is an OLE2 compound file (``CompoundFile``): its `EncryptionInfo` stream
/// describes the ciphers in XML, and its `EncryptedPackage` stream holds the document's ZIP package, encrypted in
/// segments of 4096 bytes. The password, hashed `spinCount` times with a salt, gives the keys that check it (the
/// verifier) and that decrypt the package's own key; that key decrypts each segment. LibreOffice 7.4 decrypts
/// only two of the combinations the format allows (AES-128 with SHA-1, AES-256 with SHA-512) and refuses the
/// others before it asks for any password (see docs/decisions.md): this reads every AES key size with SHA-1, SHA-256,
/// SHA-384 or SHA-512, as Word writes them.
///
/// - Important: the password is used here and nowhere else: it is never part of an error's message.
struct OfficeEncryption {
    /// A hash function the format names.
    private enum Hash: String {
        case sha1 = "SHA1"
        case sha256 = "SHA256"
        case sha384 = "SHA384"
        case sha512 = "SHA512"

        /// The hash of the parts, one after the other.
        func digest(_ parts: [UInt8]...) -> [UInt8] {
            switch self {
            case .sha1: Self.hash(with: Insecure.SHA1(), parts)
            case .sha256: Self.hash(with: SHA256(), parts)
            case .sha384: Self.hash(with: SHA384(), parts)
            case .sha512: Self.hash(with: SHA512(), parts)
            }
        }

        private static func hash<Function: HashFunction>(with function: Function, _ parts: [[UInt8]]) -> [UInt8] {
            var function = function
            for part in parts {
                function.update(data: part)
            }
            return Array(function.finalize())
        }
    }

    /// The cipher settings of one XML element (`keyData`, or the password's `encryptedKey`).
    private struct Cipher {
        var salt: [UInt8]
        var blockSize: Int
        var keyBytes: Int
        var hash: Hash

        init(_ attributes: [String: String]) throws(ConversionFailure) {
            guard attributes["cipherAlgorithm"] == "AES", attributes["cipherChaining"] == "ChainingModeCBC" else {
                throw ConversionFailure(
                    .unsupportedInput,
                    "the document is encrypted with \(attributes["cipherAlgorithm"] ?? "an unnamed cipher") "
                        + "(\(attributes["cipherChaining"] ?? "no chaining")), which Chute cannot decrypt: save it "
                        + "again with a password in a current Office"
                )
            }
            guard let name = attributes["hashAlgorithm"], let hash = Hash(rawValue: name) else {
                throw ConversionFailure(
                    .unsupportedInput,
                    "the document's encryption hashes with \(attributes["hashAlgorithm"] ?? "an unnamed function"), "
                        + "which Chute does not know"
                )
            }
            guard let salt = attributes["saltValue"].flatMap({ Data(base64Encoded: $0) }),
                let blockSize = attributes["blockSize"].flatMap(Int.init), blockSize == 16,
                let keyBits = attributes["keyBits"].flatMap(Int.init), [128, 192, 256].contains(keyBits)
            else {
                throw ConversionFailure(.corruptInput, "the document's encryption header is damaged")
            }
            self.salt = Array(salt)
            self.blockSize = blockSize
            self.keyBytes = keyBits / 8
            self.hash = hash
        }
    }

    /// The size of the package's segments, each encrypted on its own.
    private static let segmentSize = 4096
    /// The block keys (MS-OFFCRYPTO 2.3.4.13) that make, from one hashed password, the keys of the verifier's
    /// input, of its hash and of the package's key.
    private static let verifierInputBlock: [UInt8] = [0xFE, 0xA7, 0xD2, 0x76, 0x3B, 0x4B, 0x9E, 0x79]
    private static let verifierHashBlock: [UInt8] = [0xD7, 0xAA, 0x0F, 0x6D, 0x30, 0x61, 0x34, 0x4E]
    private static let keyValueBlock: [UInt8] = [0x14, 0x6E, 0x0B, 0xE7, 0xAB, 0xAC, 0xD0, 0xD6]

    private let data: Cipher
    private let password: Cipher
    private let spinCount: Int
    private let encryptedVerifierInput: [UInt8]
    private let encryptedVerifierHash: [UInt8]
    private let encryptedKey: [UInt8]

    /// Reads the `EncryptionInfo` stream.
    ///
    /// - Throws: `unsupportedInput` for the older "standard" and "extensible" encryptions (version 3.2, 4.2) and
    ///   ciphers other than AES in CBC mode; `corruptInput` when the description is damaged.
    init(info: [UInt8]) throws(ConversionFailure) {
        let major = CompoundFile.integer(info, at: 0, width: 2)
        let minor = CompoundFile.integer(info, at: 2, width: 2)
        guard major == 4, minor == 4 else {
            throw ConversionFailure(
                .unsupportedInput,
                "the document is encrypted with the Office 2007 \"standard\" encryption (version \(major).\(minor)), "
                    + "which Chute cannot decrypt: save it again with a password in a current Office"
            )
        }
        let xml = String(decoding: info.dropFirst(8), as: UTF8.self)
        guard let keyData = Self.attributes(of: "keyData", in: xml),
            let encryptedKey = Self.attributes(of: "encryptedKey", in: xml)
        else {
            throw ConversionFailure(.corruptInput, "the document's encryption header names no key")
        }
        func bytes(_ name: String) throws(ConversionFailure) -> [UInt8] {
            guard let value = encryptedKey[name].flatMap({ Data(base64Encoded: $0) }) else {
                throw ConversionFailure(.corruptInput, "the document's encryption header has no \(name)")
            }
            return Array(value)
        }
        self.data = try Cipher(keyData)
        self.password = try Cipher(encryptedKey)
        guard let spinCount = encryptedKey["spinCount"].flatMap(Int.init), (0...10_000_000).contains(spinCount) else {
            throw ConversionFailure(.corruptInput, "the document's encryption header has no usable spinCount")
        }
        self.spinCount = spinCount
        self.encryptedVerifierInput = try bytes("encryptedVerifierHashInput")
        self.encryptedVerifierHash = try bytes("encryptedVerifierHashValue")
        self.encryptedKey = try bytes("encryptedKeyValue")
    }

    /// Decrypts the `EncryptedPackage` stream with a password.
    ///
    /// - Returns: the document's ZIP package.
    /// - Throws: `encrypted` when the password does not open the document; `corruptInput` when the package is
    ///   damaged.
    func decrypt(_ package: [UInt8], password: String) throws(ConversionFailure) -> [UInt8] {
        let hashed = self.hashedPassword(password)
        let verifierInput = try Self.decrypt(
            self.encryptedVerifierInput,
            key: self.key(from: hashed, block: Self.verifierInputBlock),
            iv: self.password.salt,
            cipher: self.password
        )
        let verifierHash = try Self.decrypt(
            self.encryptedVerifierHash,
            key: self.key(from: hashed, block: Self.verifierHashBlock),
            iv: self.password.salt,
            cipher: self.password
        )
        let expected = self.password.hash.digest(Array(verifierInput.prefix(self.password.salt.count)))
        guard verifierHash.count >= expected.count, Array(verifierHash.prefix(expected.count)) == expected else {
            throw ConversionFailure(.encrypted, "the rule's password does not open the document")
        }
        let secret = try Self.decrypt(
            self.encryptedKey,
            key: self.key(from: hashed, block: Self.keyValueBlock),
            iv: self.password.salt,
            cipher: self.password
        )
        let key = Array(secret.prefix(self.data.keyBytes))
        let size = CompoundFile.integer(package, at: 0, width: 8)
        let body = package.dropFirst(8)
        guard size >= 0, size <= body.count else {
            throw ConversionFailure(.corruptInput, "the encrypted package is shorter than it says")
        }
        var plain: [UInt8] = []
        plain.reserveCapacity(body.count)
        var index: UInt32 = 0
        var offset = body.startIndex
        while offset < body.endIndex, plain.count < size {
            let end = min(body.endIndex, offset + Self.segmentSize)
            let iv = self.data.hash.digest(self.data.salt, Self.littleEndian(index))
            plain += try Self.decrypt(Array(body[offset..<end]), key: key, iv: iv, cipher: self.data)
            offset = end
            index += 1
        }
        return Array(plain.prefix(size))
    }

    /// The password hashed with the salt, then `spinCount` times with the iteration's number (2.3.4.11).
    private func hashedPassword(_ password: String) -> [UInt8] {
        let utf16 = password.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        var hash = self.password.hash.digest(self.password.salt, utf16)
        for iteration in 0..<UInt32(self.spinCount) {
            hash = self.password.hash.digest(Self.littleEndian(iteration), hash)
        }
        return hash
    }

    /// The key that a block key makes from the hashed password: their hash, cut or padded with 0x36 to the key's
    /// size.
    private func key(from hashed: [UInt8], block: [UInt8]) -> [UInt8] {
        Self.fit(self.password.hash.digest(hashed, block), to: self.password.keyBytes)
    }

    /// AES-CBC without padding, the initialisation vector cut or padded to the block size.
    private static func decrypt(
        _ ciphertext: [UInt8],
        key: [UInt8],
        iv: [UInt8],
        cipher: Cipher
    ) throws(ConversionFailure) -> [UInt8] {
        do {
            let vector = try AES._CBC.IV(ivBytes: Self.fit(iv, to: cipher.blockSize))
            return Array(try AES._CBC.decrypt(ciphertext, using: SymmetricKey(data: key), iv: vector, noPadding: true))
        } catch {
            throw ConversionFailure(.corruptInput, "the document's encrypted data is damaged (\(error))")
        }
    }

    /// `bytes` cut to `count`, or padded to it with 0x36 (2.3.4.11).
    private static func fit(_ bytes: [UInt8], to count: Int) -> [UInt8] {
        bytes.count >= count ? Array(bytes.prefix(count)) : bytes + [UInt8](repeating: 0x36, count: count - bytes.count)
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// The attributes of the first element whose name (after any namespace prefix) is `name`.
    private static func attributes(of name: String, in xml: String) -> [String: String]? {
        guard
            let start = xml.ranges(of: name).first(where: { range in
                let before = xml[..<range.lowerBound].last
                return before == "<" || before == ":"
            })
        else { return nil }
        let element = xml[start.upperBound...].prefix { $0 != ">" }
        var attributes: [String: String] = [:]
        var rest = element[...]
        while let equals = rest.firstIndex(of: "=") {
            let key = rest[..<equals].split(whereSeparator: \.isWhitespace).last.map(String.init) ?? ""
            let value = rest[rest.index(after: equals)...].drop { $0.isWhitespace }
            guard value.first == "\"", let close = value.dropFirst().firstIndex(of: "\"") else { break }
            attributes[key] = String(value[value.index(after: value.startIndex)..<close])
            rest = value[value.index(after: close)...]
        }
        return attributes
    }
}
