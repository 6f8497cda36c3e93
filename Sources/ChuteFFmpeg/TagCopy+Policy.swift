import CFFmpeg
import ChuteCore

extension TagCopy {
    /// Whether a tag survives a rule's `metadata` policy.
    ///
    /// `strip` keeps only a stream's `language`, which says how to play it, not where or by whom it was made, and a
    /// cover picture's `comment`, which the ID3 muxer turns into the picture's type (`Cover (front)`). `location`
    /// drops every key that names a place: `location` (QuickTime's `©xyz`, 3GPP's `loci`), its language variants
    /// (`location-eng`), Apple's `com.apple.quicktime.location.ISO6709` and the other `….location.…` keys, and
    /// GPS keys.
    ///
    /// - Parameters:
    ///   - key: the tag's name, in any case.
    ///   - policy: the rule's metadata policy.
    ///   - onCoverPicture: whether the tag belongs to a cover picture's stream.
    static func survives(key: String, policy: MetadataPolicy, onCoverPicture: Bool) -> Bool {
        let key = key.lowercased()
        switch policy {
        case .keep:
            return true
        case .location:
            return !Self.isLocation(key: key)
        case .strip:
            return key == "language" || (onCoverPicture && key == "comment")
        }
    }

    /// Whether a lowercased tag name names a place.
    static func isLocation(key: String) -> Bool {
        key.contains("location") || key.contains("iso6709") || key.hasPrefix("gps") || key.hasSuffix("xyz")
    }

    /// Removes from `dictionary` the tags that `policy` does not keep.
    ///
    /// The corresponding C functions are `av_dict_get` (iterating with an empty key and `AV_DICT_IGNORE_SUFFIX`) and
    /// `av_dict_set` with a null value, which deletes an entry.
    static func remove(from dictionary: inout OpaquePointer?, policy: MetadataPolicy, onCoverPicture: Bool = false) {
        guard policy != .keep else { return }
        var doomed: [String] = []
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let next = av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX) {
            entry = next
            guard let key = next.pointee.key else { continue }
            let name = String(cString: key)
            if !Self.survives(key: name, policy: policy, onCoverPicture: onCoverPicture) {
                doomed.append(name)
            }
        }
        // Deleting while iterating would move the entries under the iterator, so the keys are collected first.
        for key in doomed {
            _ = av_dict_set(&dictionary, key, nil, AV_DICT_MATCH_CASE)
        }
    }
}

extension OutputContainer {
    /// Removes the container's and every stream's tags that the rule's `metadata` policy does not keep, once the
    /// streams have been added and the tags copied, before the header is written.
    ///
    /// The rotation is a display matrix in the streams' side data, not a tag, and stays. Chapters are never
    /// copied, and libavformat writes no `encoder` tag of its own (``OutputContainer`` asks for bit-exact output).
    func applyMetadataPolicy(_ policy: MetadataPolicy) {
        TagCopy.remove(from: &self.context.pointee.metadata, policy: policy)
        for index in 0..<Int32(self.context.pointee.nb_streams) {
            let stream = self.stream(at: index)
            let isCover = stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0
            TagCopy.remove(from: &stream.pointee.metadata, policy: policy, onCoverPicture: isCover)
        }
    }
}
