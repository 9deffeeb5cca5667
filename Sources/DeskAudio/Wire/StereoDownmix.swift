/// Folds surround into stereo for a viewer with two speakers, with PipeWire's default
/// channel-mix coefficients: L = FL + 0.707·FC + 0.707·RL + 0.707·SL and
/// R = FR + 0.707·FC + 0.707·RR + 0.707·SR; LFE is left out; nothing is normalized (a mix of
/// loud channels can exceed full scale, as it does in PipeWire). Layouts other than 5.1 and
/// 7.1 keep their first two channels (a single channel goes to both). Allocates nothing.
public enum StereoDownmix {
    /// The gain of the centre channel in each side, −3 dB.
    public static let centerGain: Float = 0.707_106_77
    /// The gain of the rear and side channels in their side, −3 dB.
    public static let surroundGain: Float = 0.707_106_77

    /// Folds `samples` samples of `channels` interleaved channels (library order) from
    /// `input` into interleaved stereo in `output`, which holds at least 2 × `samples`.
    public static func fold(
        _ input: UnsafeBufferPointer<Float>, channels: Int, samples: Int, into output: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(input.count >= samples * channels && output.count >= samples * 2)
        let source = input.baseAddress!
        let target = output.baseAddress!
        for sample in 0..<samples {
            let frame = source + sample * channels
            var left: Float
            var right: Float
            switch channels {
            case 6, 8:
                let center = centerGain * frame[2]
                left = frame[0] + center + surroundGain * frame[4]
                right = frame[1] + center + surroundGain * frame[5]
                if channels == 8 {
                    left += surroundGain * frame[6]
                    right += surroundGain * frame[7]
                }
            case 1:
                left = frame[0]
                right = frame[0]
            default:
                left = frame[0]
                right = frame[1]
            }
            target[2 * sample] = left
            target[2 * sample + 1] = right
        }
    }
}
